package dev.inplace.worker.observe;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.Fixtures;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Timer;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactoryOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class RunMetricsInterceptorTest {
  private static final String QUEUE = "metrics";

  /** A node run with real workflow time between its steps: drain takes 40 s, install 5 s. */
  public static class TimedNodeUpgrade implements NodeUpgradeWorkflow {
    private final List<StepRecord> steps = new ArrayList<>();

    private void step(UpgradeStep step, Duration takes) {
      long start = Workflow.currentTimeMillis();
      Workflow.sleep(takes);
      steps.add(new StepRecord(step, StepStatus.DONE, start, Workflow.currentTimeMillis(), ""));
    }

    @Override
    public NodeUpgradeResult upgrade(NodeUpgradeRequest request) {
      steps.add(new StepRecord(UpgradeStep.STAGE, StepStatus.SKIPPED, 0, 0, "already staged"));
      step(UpgradeStep.DRAIN, Duration.ofSeconds(40));
      step(UpgradeStep.INSTALL, Duration.ofSeconds(5));
      if (request.node().nodeName().startsWith("fail")) {
        throw UpgradeFailures.nonRetryable(UpgradeFailures.PREFLIGHT_FAILED, "restart failed",
            new NodeFailure(request.node().machineName(), request.node().nodeName(), UpgradeStep.RESTART,
                UpgradeFailures.PREFLIGHT_FAILED, "restart failed", NodePhase.ROLLED_BACK, "v1.30.5+k3s1", steps));
      }
      return new NodeUpgradeResult(request.node().machineName(), request.node().nodeName(), "v1.30.5+k3s1",
          request.targetVersion(), false, steps);
    }

    @Override
    public NodeProgress progress() {
      return null;
    }

    @Override
    public void permit() {
      // Started directly, never asked to wait for a permit.
    }
  }

  private WorkerMetrics metrics;
  private TestWorkflowEnvironment env;

  @BeforeEach
  void start() {
    metrics = new WorkerMetrics();
    env = TestWorkflowEnvironment.newInstance(
        TestEnvironmentOptions.newBuilder()
            .setMetricsScope(metrics.scope())
            .setWorkerFactoryOptions(WorkerFactoryOptions.newBuilder()
                .setWorkerInterceptors(new RunMetricsInterceptor(metrics.registry())).build())
            .build());
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(TimedNodeUpgrade.class);
    env.start();
  }

  @AfterEach
  void stop() {
    env.close();
    metrics.close();
  }

  private NodeUpgradeWorkflow stub(String id) {
    return env.getWorkflowClient().newWorkflowStub(
        NodeUpgradeWorkflow.class, WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(QUEUE).build());
  }

  private double upgrades(String result) {
    Counter c = metrics.registry().find("inplace_node_upgrades").tag("result", result).counter();
    return c == null ? 0 : c.count();
  }

  @Test
  void aNodeRunIsCountedOnceByResultAndItsStepsAndDrainAreTimedInWorkflowTime() {
    stub("node-1").upgrade(Fixtures.request("worker-1", NodeRole.WORKER));
    assertThrows(WorkflowFailedException.class, () -> stub("node-2").upgrade(Fixtures.request("fail-2", NodeRole.WORKER)));

    await().atMost(10, TimeUnit.SECONDS).until(() -> upgrades("upgraded") == 1 && upgrades("rolled_back") == 1);
    Counter upgraded = metrics.registry().find("inplace_node_upgrades")
        .tags("result", "upgraded", "distribution", "k3s", "role", "worker").counter();
    assertEquals(1, upgraded.count());
    Timer drain = metrics.registry().find("inplace_drain").timer();
    assertEquals(2, drain.count());
    assertEquals(80, drain.totalTime(TimeUnit.SECONDS), 0.5);
    Timer install = metrics.registry().find("inplace_node_step").tag("step", "install").timer();
    assertEquals(2, install.count());
    assertEquals(null, metrics.registry().find("inplace_node_step").tag("step", "stage").timer(), "skipped steps are not timed");

    // A query on a closed run replays it from history on this worker: nothing is counted again.
    for (String id : List.of("node-1", "node-2")) {
      env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class, id).progress();
    }
    await().pollDelay(3, TimeUnit.SECONDS).atMost(10, TimeUnit.SECONDS).until(() -> true);
    assertEquals(1, upgrades("upgraded"));
    assertEquals(1, upgrades("rolled_back"));

    String scrape = metrics.scrape();
    assertTrue(scrape.contains("inplace_node_upgrades_total{"), scrape);
    assertTrue(scrape.contains("inplace_node_step_seconds_bucket{"), scrape);
    assertTrue(scrape.contains("inplace_drain_seconds_bucket{"), scrape);
    assertTrue(scrape.contains("inplace_runs_in_flight{kind=\"node\"} 0"), scrape);
    assertTrue(scrape.contains("temporal_"), "the SDK's own metrics are carried: " + scrape);
  }

  @Test
  void aRunningNodeRunIsInFlightUntilItEnds() {
    WorkflowClient.start(stub("node-3")::upgrade, Fixtures.request("worker-3", NodeRole.WORKER));
    Gauge gauge = metrics.registry().find("inplace_runs_in_flight").tag("kind", "node").gauge();
    await().atMost(10, TimeUnit.SECONDS).until(() -> gauge.value() == 1);
    env.getWorkflowClient().newUntypedWorkflowStub("node-3").getResult(NodeUpgradeResult.class);
    await().atMost(10, TimeUnit.SECONDS).until(() -> gauge.value() == 0);
  }
}
