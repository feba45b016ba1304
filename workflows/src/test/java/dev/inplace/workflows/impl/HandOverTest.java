package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.concat;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;

import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.HandedOverNode;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeResult;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentEstate;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * WorkersUpgrade runs hand their nodes in flight over at continue-as-new (workers-hand-over-children):
 * the next run follows the children by their end reports, the window holds across the hand-over,
 * and every node ends upgraded once or with its failure recorded.
 *
 * <p>Real time, children of seconds: Temporal's Java test server stops skipping time for good once
 * a child ends after the run that started it has continued as new (it locks time "to notify the
 * parent", and only that parent run, now closed, would unlock it), which is exactly what a hand-over
 * does.
 */
class HandOverTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  /** Small enough that a run continues as new after a few nodes (a window of 3 needs at least 80). */
  private static final int HISTORY_LIMIT = 80;
  private static final Duration PROBE = Duration.ofSeconds(1);

  private final ChildScript script = new ChildScript().everyNodeTakes(Duration.ofSeconds(2));
  private final ParentEstate estate = new ParentEstate(script);
  private final String workflowId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);

  private WorkersUpgradeWorkflow poolRun(TestWorkflowEnvironment env, Worker worker, int size) {
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, size, FROM))))
        .when(estate.capi).describeCluster(any());
    estate.register(worker, HISTORY_LIMIT, PROBE);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  private static WorkersUpgradeRequest request(String window, FailurePolicy policy, int maxFailures) {
    return new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), window, policy, maxFailures, 0, null, null);
  }

  private static WorkersUpgradeResult resultOf(WorkersUpgradeWorkflow run) {
    try {
      return WorkflowStub.fromTyped(run).getResult(120, TimeUnit.SECONDS, WorkersUpgradeResult.class);
    } catch (TimeoutException e) {
      return fail("the run did not end within 120 s: " + run.progress());
    }
  }

  /** The nodes each run of the chain took over from the run before it, in order. */
  private List<List<String>> handedOverPerRun(TestWorkflowEnvironment env, WorkflowExecution first) {
    List<List<String>> perRun = new ArrayList<>();
    String runId = first.getRunId();
    while (runId != null) {
      WorkflowExecutionHistory history = env.getWorkflowClient().fetchHistory(workflowId, runId);
      WorkersUpgradeRequest input = DefaultDataConverter.STANDARD_INSTANCE.fromPayloads(0,
          Optional.of(history.getEvents().get(0).getWorkflowExecutionStartedEventAttributes().getInput()),
          WorkersUpgradeRequest.class, WorkersUpgradeRequest.class);
      perRun.add(input.carried() == null || input.carried().handedOver() == null
          ? List.of()
          : input.carried().handedOver().stream().map(HandedOverNode::node).toList());
      HistoryEvent last = history.getLastEvent();
      runId = last.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
          ? last.getWorkflowExecutionContinuedAsNewEventAttributes().getNewExecutionRunId()
          : null;
    }
    return perRun;
  }

  private static String machine(int i) {
    return "edge-1-" + POOL + "-" + i;
  }

  @Test
  void continuesAsNewWithoutWaitingForItsNodesAndUpgradesEveryNodeOnceWithinTheWindow(
      TestWorkflowEnvironment env, Worker worker) {
    int size = 12;
    WorkersUpgradeWorkflow run = poolRun(env, worker, size);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("3", FailurePolicy.HALT, 0));

    WorkersUpgradeResult result = resultOf(run);

    assertEquals(size, result.upgraded());
    assertTrue(result.runs() > 1, "runs: " + result.runs());
    for (int i = 1; i <= size; i++) {
      assertEquals(1, script.upgradesOf(POOL + "-" + i), POOL + "-" + i + " upgraded once");
      assertEndsUnmarked(machine(i));
    }
    assertEquals(size, script.starts().size(), "no node started twice: " + script.starts());
    assertTrue(script.maxConcurrent() <= 3, "the window holds across hand-overs: " + script.maxConcurrent());
    List<List<String>> handedOver = handedOverPerRun(env, first);
    assertEquals(result.runs(), handedOver.size());
    assertTrue(handedOver.stream().anyMatch(nodes -> !nodes.isEmpty()),
        "some run took nodes in flight over: " + handedOver);
  }

  @Test
  void aHandedOverNodeThatFailsIsRecordedWithItsOwnFailure(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce(POOL + "-1", UpgradeStep.VERIFY, UpgradeFailures.NODE_NOT_READY, NodePhase.ROLLED_BACK,
        Duration.ofSeconds(4));
    WorkersUpgradeWorkflow run = poolRun(env, worker, 6);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("3", FailurePolicy.CONTINUE, 1));

    WorkersUpgradeResult result = resultOf(run);

    assertTrue(handedOverPerRun(env, first).stream().anyMatch(nodes -> nodes.contains(POOL + "-1")),
        POOL + "-1 was handed over: " + handedOverPerRun(env, first));
    assertEquals(5, result.upgraded());
    assertEquals(1, result.failed());
    ParentFixtures.assertInjectedVerifyFailure(result.nodes(), POOL + "-1");
  }

  @Test
  void cancellingARunCancelsTheChildrenItFollowsAndPutsTheirNodesBack(TestWorkflowEnvironment env, Worker worker) {
    script.everyNodeTakes(Duration.ofSeconds(60));
    WorkersUpgradeWorkflow run = poolRun(env, worker, 6);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("3", FailurePolicy.HALT, 0));
    awaitHandOver(env, first);

    WorkflowStub.fromTyped(run).cancel();

    try {
      WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class);
      fail("a cancelled run ends cancelled");
    } catch (WorkflowFailedException expected) {
      // cancelled
    } catch (TimeoutException e) {
      fail("the cancelled run did not end within 60 s: " + run.progress());
    }
    List<String> handedOver = handedOverPerRun(env, first).stream().flatMap(List::stream).toList();
    assertFalse(handedOver.isEmpty());
    for (String node : handedOver) {
      ChildScript.Run last = script.lastRun(node);
      assertTrue(last != null && !last.upgraded(), node + " was cancelled, not upgraded: " + last);
      assertEndsUnmarked("edge-1-" + node);
    }
  }

  @Test
  void aChildThatEndsWithoutReportingIsFoundByTheProbeAndItsNodeRecordedAsUnknown(
      TestWorkflowEnvironment env, Worker worker) {
    script.everyNodeTakes(Duration.ofSeconds(60));
    WorkersUpgradeWorkflow run = poolRun(env, worker, 3);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("3", FailurePolicy.CONTINUE, 3));
    awaitHandOver(env, first);
    List<String> handedOver = handedOverPerRun(env, first).stream().flatMap(List::stream).toList();

    // Terminated by hand: no end report; the next run learns it from its probe.
    for (String node : handedOver) {
      env.getWorkflowClient().newUntypedWorkflowStub(WorkflowIds.nodeUpgrade("fleet", "edge-1-" + node, TO))
          .terminate("by hand");
    }

    WorkersUpgradeResult result = resultOf(run);
    for (String node : handedOver) {
      NodeStatus status = result.nodes().stream().filter(n -> n.node().equals(node)).findFirst().orElseThrow();
      assertEquals(NodePhase.ROLLBACK_FAILED, status.phase(), node + ": " + status);
      assertTrue(status.message().contains("ended without reporting how"), status.message());
    }
  }

  /**
   * The Machine was unmarked as often as it was marked, last (a node prepared ahead and stood down
   * at a hand-over is marked and unmarked once more).
   */
  private void assertEndsUnmarked(String machine) {
    List<Boolean> marks = estate.marksOf(machine);
    assertFalse(marks.isEmpty(), machine + " was marked");
    assertEquals(marks.stream().filter(m -> m).count(), marks.stream().filter(m -> !m).count(), machine + ": " + marks);
    assertFalse(marks.get(marks.size() - 1), machine + " ends unmarked: " + marks);
  }

  /** Waits until the run has continued as new with a node in flight. */
  private void awaitHandOver(TestWorkflowEnvironment env, WorkflowExecution first) {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (System.nanoTime() < deadline) {
      if (handedOverPerRun(env, first).stream().anyMatch(nodes -> !nodes.isEmpty())) {
        return;
      }
      try {
        Thread.sleep(100);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new AssertionError(e);
      }
    }
    fail("no hand-over within 60 s");
  }

  // ---- replay fixtures of the new path (recorded with -Dhistories.update=true) ------------------

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordHandOver(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String firstFile = "workers-upgrade-handed-over-first-run.json";
    String nextFile = "workers-upgrade-handed-over-next-run.json";
    HistoryFixtures.assumeNotRecorded(firstFile);
    WorkersUpgradeWorkflow run = poolRun(env, worker, 6);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("3", FailurePolicy.HALT, 0));
    assertEquals(6, resultOf(run).upgraded());
    List<List<String>> handedOver = handedOverPerRun(env, first);
    assertFalse(handedOver.get(1).isEmpty(), "the second run took nodes over: " + handedOver);
    String secondRunId = env.getWorkflowClient().fetchHistory(workflowId, first.getRunId()).getLastEvent()
        .getWorkflowExecutionContinuedAsNewEventAttributes().getNewExecutionRunId();
    HistoryFixtures.record(env, workflowId, first.getRunId(), firstFile);
    HistoryFixtures.record(env, workflowId, secondRunId, nextFile);
  }
}
