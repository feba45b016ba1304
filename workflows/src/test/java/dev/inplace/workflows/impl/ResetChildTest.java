package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.awaitProgress;
import static dev.inplace.workflows.testing.ParentFixtures.concat;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;

import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeResult;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentEstate;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A WorkersUpgrade run halted on a failed node takes the end report of that node's NodeUpgrade
 * reset by an operator (workers-adopt-reset-child): the node is upgraded, retried by the reset, and
 * the run goes on. The reset run's report is sent here as the real server delivers it (the Java test
 * server has no reset; RunbookCommandsIT resets a real child on the real server). A report that
 * does not come from a reset of the failed node's child changes nothing.
 */
class ResetChildTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  static final String FIXTURE = "workers-upgrade-adopts-reset-child.json";

  private final ChildScript script = new ChildScript().everyNodeTakes(Duration.ofSeconds(10));
  private final ParentEstate estate = new ParentEstate(script);
  private final String workflowId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
  private final String failedNode = POOL + "-1";
  private final String childId = WorkflowIds.nodeUpgrade("fleet", "edge-1-" + failedNode, TO);

  private WorkersUpgradeWorkflow startHalted(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce(failedNode, UpgradeStep.VERIFY, UpgradeFailures.NODE_NOT_READY, NodePhase.ROLLED_BACK,
        Duration.ofSeconds(5));
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, 3, FROM))))
        .when(estate.capi).describeCluster(any());
    estate.register(worker);
    env.start();
    WorkersUpgradeWorkflow run = env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
    WorkflowClient.start(run::upgrade, new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), "1", FailurePolicy.HALT, 0, 0, null, null));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);
    return run;
  }

  private NodeEnd upgradedReport(String reportingId) {
    return new NodeEnd(failedNode, reportingId, "reset-run", new NodeUpgradeResult(
        "edge-1-" + failedNode, failedNode, FROM, TO, false, List.of()), null, null, null);
  }

  private static NodeStatus node(UpgradeProgress progress, String name) {
    return progress.nodes().stream().filter(n -> n.node().equals(name)).findFirst().orElseThrow();
  }

  @Test
  void anUpgradedReportOfTheFailedNodesResetChildRecordsItRetriedAndUpgradedAndTheRunGoesOn(
      TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = startHalted(env, worker);

    run.nodeEnded(upgradedReport(childId));

    WorkersUpgradeResult result = WorkflowStub.fromTyped(run).getResult(WorkersUpgradeResult.class);
    assertEquals(3, result.upgraded(), result.nodes().toString());
    assertEquals(0, result.failed());
    NodeStatus reset = result.nodes().stream().filter(n -> n.node().equals(failedNode)).findFirst().orElseThrow();
    assertEquals(NodePhase.UPGRADED, reset.phase());
    assertTrue(reset.message().startsWith("retried by a reset of " + childId + " (run reset-run): upgraded "
        + FROM + " -> " + TO + "; it had failed with " + UpgradeFailures.NODE_NOT_READY), reset.message());
    assertEquals(1, script.starts().stream().filter(failedNode::equals).count(), "the parent started no child again");
  }

  @Test
  void aReportFromAnotherWorkflowOrOfAFailureLeavesTheNodeFailedAndTheRunHalted(
      TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = startHalted(env, worker);

    run.nodeEnded(upgradedReport(childId + "-other"));
    run.nodeEnded(new NodeEnd(failedNode, childId, "reset-run", null, UpgradeFailures.NODE_NOT_READY, "again", null));
    env.sleep(Duration.ofMinutes(1));

    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.HALTED, progress.phase());
    assertEquals(NodePhase.ROLLED_BACK, node(progress, failedNode).phase());
    run.skipNode(failedNode);
    assertEquals(2, WorkflowStub.fromTyped(run).getResult(WorkersUpgradeResult.class).upgraded());
  }

  // ---- replay fixture of the new path (recorded with -Dhistories.update=true) --------------------

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordAdoptedResetChild(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(FIXTURE);
    WorkersUpgradeWorkflow run = startHalted(env, worker);
    run.nodeEnded(upgradedReport(childId));
    assertEquals(3, WorkflowStub.fromTyped(run).getResult(WorkersUpgradeResult.class).upgraded());
    HistoryFixtures.record(env, workflowId, null, FIXTURE);
  }
}
