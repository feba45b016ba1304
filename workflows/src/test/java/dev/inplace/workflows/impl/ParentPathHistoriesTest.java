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
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.when;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeResult;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodePhase;
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
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowStub;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.testing.WorkflowInitialTime;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Records (with {@code -Dhistories.update=true}) parent histories on paths the first fixtures did
 * not cover: the CONTINUE policy with a failed node, pause and resume, skip, soak and maintenance
 * timers, a failed health gate, and cancellation with nodes in flight. {@link
 * ParentUpgradeReplayTest} replays them on every build, so a change to the parents' commands on
 * any of these paths fails there.
 */
class ParentPathHistoriesTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  private final ChildScript script = new ChildScript();
  /** The healthy cluster and the registration the prepared-ahead tests share. */
  private final ParentEstate estate = new ParentEstate(script);
  private final NodeActivities nodes = estate.nodes;
  private final ClusterApiActivities capi = estate.capi;

  private <T> T start(TestWorkflowEnvironment env, Worker worker, Class<T> type, String workflowId) {
    return estate.start(env, worker, type, workflowId);
  }

  private static <R> R resultOf(Object run, Class<R> type) throws Exception {
    return WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, type);
  }

  /** CONTINUE with one failure allowed, a soak between nodes, pause and resume, a pending node skipped. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordContinuePolicyPausedSkippedSoaked(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "workers-upgrade-continue-paused-skipped.json";
    HistoryFixtures.assumeNotRecorded(file);
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, 6, FROM)))).when(capi).describeCluster(any());
    script.everyNodeTakes(Duration.ofMinutes(5));
    script.failsOnce(POOL + "-2", UpgradeStep.DRAIN, UpgradeFailures.DRAIN_BLOCKED, NodePhase.ROLLED_BACK, Duration.ofMinutes(2));
    String id = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
    WorkersUpgradeWorkflow run = start(env, worker, WorkersUpgradeWorkflow.class, id);
    WorkflowClient.start(run::upgrade, new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), "2", FailurePolicy.CONTINUE, 1, 60, null, null));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 2);
    run.pause();
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.inFlight() == 0 && p.phase() == RunPhase.PAUSED);
    run.skipNode(POOL + "-6");
    run.resume();
    WorkersUpgradeResult result = resultOf(run, WorkersUpgradeResult.class);
    assertEquals(4, result.upgraded());
    assertEquals(1, result.failed());
    assertEquals(1, result.skipped());
    HistoryFixtures.record(env, id, null, file);
  }

  /**
   * Start checks read at once (workers-start-checks-at-once): a pool upgraded, and a pool refused by
   * its health gate while the artifacts and budgets were read beside it.
   */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordWorkersStartChecksAtOnce(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String upgraded = "workers-upgrade-start-checks-at-once.json";
    String refused = "workers-upgrade-start-checks-at-once-gate-failed.json";
    HistoryFixtures.assumeNotRecorded(upgraded, refused);
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, 3, FROM)))).when(capi).describeCluster(any());
    WorkersUpgradeRequest request = new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), "2", FailurePolicy.HALT, 0, 0, null, null);
    WorkersUpgradeWorkflow run = estate.startFixtureRun(env, worker, WorkersUpgradeWorkflow.class, upgraded);
    assertEquals(3, run.upgrade(request).upgraded());
    HistoryFixtures.recordUnderItsId(env, upgraded);

    when(nodes.awaitControlPlaneHealthy(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, "cp-2 not Ready"));
    WorkersUpgradeWorkflow gated = env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
        io.temporal.client.WorkflowOptions.newBuilder().setWorkflowId(HistoryFixtures.idOf(refused))
            .setTaskQueue(worker.getTaskQueue()).build());
    assertThrows(WorkflowFailedException.class, () -> gated.upgrade(request));
    HistoryFixtures.recordUnderItsId(env, refused);
  }

  /** A pool cancelled with two nodes in flight: both children put back, both Machines unmarked. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordWorkersCancelledInFlight(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "workers-upgrade-cancelled-in-flight.json";
    HistoryFixtures.assumeNotRecorded(file);
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, 4, FROM)))).when(capi).describeCluster(any());
    String id = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
    WorkersUpgradeWorkflow run = start(env, worker, WorkersUpgradeWorkflow.class, id);
    WorkflowClient.start(run::upgrade, new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), "2", FailurePolicy.HALT, 0, 0, null, null));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 2);
    WorkflowStub stub = WorkflowStub.fromTyped(run);
    stub.cancel();
    assertThrows(WorkflowFailedException.class, () -> stub.getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class));
    HistoryFixtures.record(env, id, null, file);
  }

  /**
   * Monday 20:00 UTC, a window from 22:00: the control plane waits for it, the health gate before
   * cp-2 fails, the operator skips cp-2, cp-3 upgrades; mixed versions keep the object paused.
   */
  @Test
  @WorkflowInitialTime("2026-01-05T20:00:00Z")
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordControlPlaneGateFailedSkippedInWindow(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "cp-upgrade-gate-failed-skipped-window.json";
    HistoryFixtures.assumeNotRecorded(file);
    when(capi.describeCluster(any())).thenReturn(inventory(controlPlanes(3, FROM)));
    when(nodes.awaitControlPlaneHealthy(any()))
        .thenReturn(new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3")))
        .thenThrow(ApplicationFailure.newNonRetryableFailure("etcd member cp-3 not a voter", UpgradeFailures.CONTROL_PLANE_UNHEALTHY))
        .thenReturn(new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3")));
    String id = WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO);
    ControlPlaneUpgradeWorkflow run = start(env, worker, ControlPlaneUpgradeWorkflow.class, id);
    WorkflowClient.start(run::upgrade, new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, ParentFixtures.template(), 0,
        new MaintenanceWindow(List.of(), "22:00", "02:00", "UTC")));
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);
    run.skipNode("cp-2");
    ControlPlaneUpgradeResult result = resultOf(run, ControlPlaneUpgradeResult.class);
    assertEquals(2, result.upgraded());
    assertEquals(1, result.skipped());
    HistoryFixtures.record(env, id, null, file);
  }

  /** A control plane cancelled with its first node in flight: the node is put back, the pause released. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordControlPlaneCancelledInFlight(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "cp-upgrade-cancelled-in-flight.json";
    HistoryFixtures.assumeNotRecorded(file);
    when(capi.describeCluster(any())).thenReturn(inventory(controlPlanes(3, FROM)));
    String id = WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO);
    ControlPlaneUpgradeWorkflow run = start(env, worker, ControlPlaneUpgradeWorkflow.class, id);
    WorkflowClient.start(run::upgrade, new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, ParentFixtures.template(), 0, null));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);
    WorkflowStub stub = WorkflowStub.fromTyped(run);
    stub.cancel();
    assertThrows(WorkflowFailedException.class, () -> stub.getResult(60, TimeUnit.SECONDS, ControlPlaneUpgradeResult.class));
    HistoryFixtures.record(env, id, null, file);
  }
}
