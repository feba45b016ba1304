package dev.inplace.workflows.impl;

import static dev.inplace.workflows.impl.ControlPlaneUpgradeWorkflowTest.node;
import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.awaitProgress;
import static dev.inplace.workflows.testing.ParentFixtures.concat;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;

import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeResult;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
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
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerOptions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Parents that prepare ahead (parent-prepares-ahead): the window bounds disruption, not
 * preparation; the controls stand prepared nodes down with nothing changed; a worker that dies while
 * prepared children wait resumes exactly. Sticky execution is off, so every workflow task replays
 * its run's whole history: the new path is replayed on every step.
 */
class PreparedAheadTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension()
      .setWorkerOptions(WorkerOptions.newBuilder().setStickyQueueScheduleToStartTimeout(Duration.ZERO).build())
      .build();

  private final ChildScript script =
      new ChildScript().everyNodePrepares(Duration.ofMinutes(1)).everyNodeTakes(Duration.ofMinutes(10));
  private final ParentEstate estate = new ParentEstate(script);
  private final String poolId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);

  private void pool(int size) {
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, size, FROM))))
        .when(estate.capi).describeCluster(any());
  }

  private static WorkersUpgradeRequest pool(String maxUnavailable) {
    return new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), maxUnavailable, FailurePolicy.HALT, 0, 0, null, null);
  }

  private WorkersUpgradeWorkflow startPool(TestWorkflowEnvironment env, Worker worker, int size, String maxUnavailable) {
    pool(size);
    WorkersUpgradeWorkflow run = estate.start(env, worker, WorkersUpgradeWorkflow.class, poolId);
    WorkflowClient.start(run::upgrade, pool(maxUnavailable));
    return run;
  }

  private static WorkersUpgradeResult resultOf(WorkersUpgradeWorkflow run) throws Exception {
    return WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class);
  }

  /** Waits until {@code node} is prepared (its child waits for its turn) while the run upgrades. */
  private UpgradeProgress awaitPrepared(TestWorkflowEnvironment env, WorkersUpgradeWorkflow run, String node) {
    return awaitProgress(env, run, Duration.ofSeconds(20),
        p -> script.preparations().contains(node) && node(p, node).phase() == NodePhase.PENDING && p.inFlight() > 0);
  }

  @Test
  void theNextControlPlaneIsPreparedWhileTheOneBeforeIsUpgradedButNeverUpgradedWithIt(
      TestWorkflowEnvironment env, Worker worker) throws Exception {
    doAnswer(inv -> inventory(controlPlanes(3, FROM))).when(estate.capi).describeCluster(any());
    ControlPlaneUpgradeWorkflow run = estate.start(env, worker, ControlPlaneUpgradeWorkflow.class,
        WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO));

    ControlPlaneUpgradeResult result = run.upgrade(new ControlPlaneUpgradeRequest(
        Fixtures.CLUSTER, ParentFixtures.template(), 0, null));

    assertEquals(3, result.upgraded());
    assertEquals(1, script.maxConcurrent(), "control-plane nodes must never be upgraded together");
    assertEquals(List.of("cp-1", "cp-2", "cp-3"), script.starts());
    assertEquals(List.of("cp-2", "cp-3"), script.preparations(), "the first starts with its turn, the others ahead");
    for (String[] pair : List.of(new String[] {"cp-1", "cp-2"}, new String[] {"cp-2", "cp-3"})) {
      ChildScript.Run before = script.lastRun(pair[0]);
      assertTrue(script.preparedAt(pair[1]) < before.finishedMillis(), pair[1] + " prepared while " + pair[0] + " upgraded");
      assertTrue(script.lastRun(pair[1]).startedMillis() >= before.finishedMillis(), pair[1] + " upgraded after " + pair[0]);
    }
  }

  @Test
  void aPoolPreparesItsNextWindowWhileTheCurrentOneIsUpgraded(TestWorkflowEnvironment env, Worker worker) throws Exception {
    WorkersUpgradeWorkflow run = startPool(env, worker, 6, "2");

    WorkersUpgradeResult result = resultOf(run);

    assertEquals(6, result.upgraded());
    assertEquals(2, script.maxConcurrent(), "the window bounds the nodes being upgraded");
    // Children start their first task in any order: the set, not the order, is the parent's.
    assertEquals(List.of(POOL + "-3", POOL + "-4", POOL + "-5", POOL + "-6"), script.preparations().stream().sorted().toList());
    assertTrue(script.preparedAt(POOL + "-3") < script.lastRun(POOL + "-1").finishedMillis());
    for (int i = 1; i <= 6; i++) {
      assertEquals(1, script.upgradesOf(POOL + "-" + i));
    }
  }

  @Test
  void pauseStandsThePreparedNodesDownAndResumePreparesThemAgain(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    WorkersUpgradeWorkflow run = startPool(env, worker, 4, "1");
    awaitPrepared(env, run, POOL + "-2");

    run.pause();
    UpgradeProgress paused =
        awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.PAUSED && p.inFlight() == 0);

    assertEquals(List.of(POOL + "-2"), script.stoodDown());
    NodeStatus stood = node(paused, POOL + "-2");
    assertEquals(NodePhase.PENDING, stood.phase());
    assertTrue(stood.message().contains("stood down before its turn (paused)"), stood.message());
    run.resume();
    assertEquals(4, resultOf(run).upgraded());
    assertEquals(1, script.maxConcurrent());
    assertEquals(List.of(POOL + "-1", POOL + "-2", POOL + "-3", POOL + "-4"), script.starts());
  }

  @Test
  void aNodeFailingBeforeItsTurnHaltsTheRunWithNothingChangedAndRetryRunsItAgain(
      TestWorkflowEnvironment env, Worker worker) throws Exception {
    script.failsBeforeItsTurn(POOL + "-2", UpgradeStep.STAGE, UpgradeFailures.REMOTE_COMMAND_FAILED, Duration.ofSeconds(30));
    WorkersUpgradeWorkflow run = startPool(env, worker, 4, "1");

    UpgradeProgress halted = awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);

    NodeStatus failed = node(halted, POOL + "-2");
    assertEquals(NodePhase.FAILED, failed.phase());
    assertEquals(UpgradeStep.STAGE, failed.step());
    assertTrue(failed.message().contains("nothing was changed"), failed.message());
    assertFalse(script.starts().contains(POOL + "-2"), "a node that failed before its turn was never upgraded");
    run.retryNode(POOL + "-2");
    assertEquals(4, resultOf(run).upgraded());
    assertEquals(1, script.maxConcurrent());
  }

  @Test
  void abortStandsThePreparedNodesDownAndLeavesThemNotStarted(TestWorkflowEnvironment env, Worker worker) throws Exception {
    WorkersUpgradeWorkflow run = startPool(env, worker, 4, "1");
    awaitPrepared(env, run, POOL + "-2");

    run.abort();
    WorkersUpgradeResult result = resultOf(run);

    assertTrue(result.aborted());
    assertEquals(1, result.upgraded());
    assertEquals(List.of(POOL + "-2"), script.stoodDown());
    assertEquals(List.of(POOL + "-1"), script.starts());
    for (int i = 2; i <= 4; i++) {
      assertEquals(NodePhase.PENDING, node(run.progress(), POOL + "-" + i).phase());
    }
    verify(estate.capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-" + POOL + "-2", false, poolId));
  }

  @Test
  void skippingAPreparedNodeStandsItDown(TestWorkflowEnvironment env, Worker worker) throws Exception {
    WorkersUpgradeWorkflow run = startPool(env, worker, 3, "1");
    awaitPrepared(env, run, POOL + "-2");

    run.skipNode(POOL + "-2");
    WorkersUpgradeResult result = resultOf(run);

    assertEquals(2, result.upgraded());
    assertEquals(1, result.skipped());
    assertEquals(List.of(POOL + "-2"), script.stoodDown());
    assertEquals(List.of(POOL + "-1", POOL + "-3"), script.starts());
  }

  @Test
  void cancellingTheRunStandsThePreparedNodesDownAndUnmarksEveryMachine(TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = startPool(env, worker, 4, "1");
    awaitPrepared(env, run, POOL + "-2");
    WorkflowStub stub = WorkflowStub.fromTyped(run);

    stub.cancel();

    assertThrows(WorkflowFailedException.class, () -> stub.getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class));
    UpgradeProgress progress = run.progress();
    assertEquals(NodePhase.ROLLED_BACK, node(progress, POOL + "-1").phase());
    NodeStatus prepared = node(progress, POOL + "-2");
    assertEquals(NodePhase.FAILED, prepared.phase());
    assertTrue(prepared.message().contains("nothing was changed"), prepared.message());
    assertEquals(List.of(POOL + "-2"), script.stoodDown());
    for (int i = 1; i <= 2; i++) {
      verify(estate.capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-" + POOL + "-" + i, false, poolId));
    }
  }

  @Test
  void aWorkerKilledWhileAPreparedChildWaitsResumesAndUpgradesEveryNodeOnce(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    WorkersUpgradeWorkflow run = startPool(env, worker, 4, "1");
    awaitPrepared(env, run, POOL + "-2");

    env.getWorkerFactory().shutdownNow();
    env.getWorkerFactory().awaitTermination(10, TimeUnit.SECONDS);
    WorkerFactory restarted = WorkerFactory.newInstance(env.getWorkflowClient());
    estate.register(restarted.newWorker(worker.getTaskQueue(),
        WorkerOptions.newBuilder().setStickyQueueScheduleToStartTimeout(Duration.ZERO).build()));
    restarted.start();
    try {
      assertEquals(4, resultOf(run).upgraded());
    } finally {
      restarted.shutdownNow();
    }
    assertEquals(1, script.maxConcurrent());
    assertEquals(List.of(), script.stoodDown());
    for (int i = 1; i <= 4; i++) {
      assertEquals(1, script.upgradesOf(POOL + "-" + i), POOL + "-" + i);
    }
  }

  // ---- replay fixtures of the new path (recorded with -Dhistories.update=true) ------------------

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordControlPlanePreparedAhead(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "cp-upgrade-prepared-ahead.json";
    HistoryFixtures.assumeNotRecorded(file);
    ControlPlaneUpgradeWorkflow run = controlPlane(env, worker, file);
    assertEquals(3, run.upgrade(controlPlaneRequest()).upgraded());
    HistoryFixtures.record(env, HistoryFixtures.idOf(file), null, file);
  }

  /** The gate before cp-2 fails while cp-2 is prepared: it stands down; the operator retries it. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordControlPlanePreparedAheadGateFailed(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "cp-upgrade-prepared-ahead-gate-failed-retried.json";
    HistoryFixtures.assumeNotRecorded(file);
    when(estate.nodes.awaitControlPlaneHealthy(any()))
        .thenReturn(new ControlPlaneHealth(true, List.of()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, "cp-1 is not an etcd voter"))
        .thenReturn(new ControlPlaneHealth(true, List.of()));
    ControlPlaneUpgradeWorkflow run = controlPlane(env, worker, file);
    WorkflowClient.start(run::upgrade, controlPlaneRequest());
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);
    run.retryNode("cp-2");
    assertEquals(3, WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, ControlPlaneUpgradeResult.class).upgraded());
    HistoryFixtures.record(env, HistoryFixtures.idOf(file), null, file);
  }

  /** Continue-as-new with nodes prepared ahead: a window of 2, the next 2 prepared. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPoolPreparedAheadAcrossContinueAsNew(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String first = "workers-upgrade-prepared-ahead-first-run.json";
    String last = "workers-upgrade-prepared-ahead-last-run.json";
    HistoryFixtures.assumeNotRecorded(first, last);
    pool(10);
    WorkersUpgradeWorkflow run = pool(env, worker, first, 120);
    WorkflowExecution firstRun = WorkflowClient.start(run::upgrade, pool("2"));
    WorkersUpgradeResult result = WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class);
    assertTrue(result.runs() > 1, "runs: " + result.runs());
    HistoryFixtures.record(env, HistoryFixtures.idOf(first), firstRun.getRunId(), first);
    HistoryFixtures.record(env, HistoryFixtures.idOf(first), null, last);
  }

  /** CONTINUE: pause with a node prepared (stood down), a pending node skipped, resume; a node fails before its turn. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPoolPreparedAheadPausedSkippedFailed(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "workers-upgrade-prepared-ahead-paused-skipped-failed.json";
    HistoryFixtures.assumeNotRecorded(file);
    pool(5);
    script.failsBeforeItsTurn(POOL + "-4", UpgradeStep.PREFLIGHT, UpgradeFailures.INSUFFICIENT_DISK, Duration.ofSeconds(30));
    WorkersUpgradeWorkflow run = pool(env, worker, file, WorkersUpgradeWorkflowImpl.DEFAULT_HISTORY_LIMIT);
    WorkflowClient.start(run::upgrade, new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), "1", FailurePolicy.CONTINUE, 1, 0, null, null));
    awaitPrepared(env, run, POOL + "-2");
    run.pause();
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.PAUSED && p.inFlight() == 0);
    run.skipNode(POOL + "-3");
    run.resume();
    WorkersUpgradeResult result = WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class);
    assertEquals(3, result.upgraded());
    assertEquals(1, result.failed());
    assertEquals(1, result.skipped());
    HistoryFixtures.record(env, HistoryFixtures.idOf(file), null, file);
  }

  /** Aborted with a node prepared. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPoolPreparedAheadAborted(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "workers-upgrade-prepared-ahead-aborted.json";
    HistoryFixtures.assumeNotRecorded(file);
    pool(4);
    WorkersUpgradeWorkflow run = pool(env, worker, file, WorkersUpgradeWorkflowImpl.DEFAULT_HISTORY_LIMIT);
    WorkflowClient.start(run::upgrade, pool("1"));
    awaitPrepared(env, run, POOL + "-2");
    run.abort();
    assertTrue(WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class).aborted());
    HistoryFixtures.record(env, HistoryFixtures.idOf(file), null, file);
  }

  /** Cancelled with a node in flight and one prepared. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPoolPreparedAheadCancelled(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "workers-upgrade-prepared-ahead-cancelled.json";
    HistoryFixtures.assumeNotRecorded(file);
    pool(4);
    WorkersUpgradeWorkflow run = pool(env, worker, file, WorkersUpgradeWorkflowImpl.DEFAULT_HISTORY_LIMIT);
    WorkflowClient.start(run::upgrade, pool("1"));
    awaitPrepared(env, run, POOL + "-2");
    WorkflowStub stub = WorkflowStub.fromTyped(run);
    stub.cancel();
    assertThrows(WorkflowFailedException.class, () -> stub.getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class));
    HistoryFixtures.record(env, HistoryFixtures.idOf(file), null, file);
  }

  private static ControlPlaneUpgradeRequest controlPlaneRequest() {
    return new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, ParentFixtures.template(), 0, null);
  }

  private ControlPlaneUpgradeWorkflow controlPlane(TestWorkflowEnvironment env, Worker worker, String file) {
    doAnswer(inv -> inventory(controlPlanes(3, FROM))).when(estate.capi).describeCluster(any());
    estate.register(worker);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(ControlPlaneUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(HistoryFixtures.idOf(file)).setTaskQueue(worker.getTaskQueue()).build());
  }

  private WorkersUpgradeWorkflow pool(TestWorkflowEnvironment env, Worker worker, String file, int historyLimit) {
    estate.register(worker, historyLimit);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(HistoryFixtures.idOf(file)).setTaskQueue(worker.getTaskQueue()).build());
  }
}
