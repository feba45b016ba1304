package dev.inplace.workflows.impl;

import static dev.inplace.workflows.impl.ControlPlaneUpgradeWorkflowTest.node;
import static dev.inplace.workflows.impl.ControlPlaneUpgradeWorkflowTest.rootMessage;
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
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeResult;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.FakeNodeUpgrade;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.client.WorkflowUpdateException;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.testing.WorkflowInitialTime;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;

class WorkersUpgradeWorkflowTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = ParentFixtures.clusterApiMock();
  private final ChildScript script = new ChildScript();
  private final String workflowId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);

  @BeforeEach
  void controlPlaneAtTargetAndAPoolOfSix() {
    pool(6);
    when(nodes.awaitControlPlaneHealthy(any())).thenReturn(new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3")));
    when(hosts.verifyArtifacts(any())).thenReturn(new ArtifactCheckResult(List.of("k3s", "k3s-airgap-images")));
    when(nodes.listBlockingBudgets(any())).thenReturn(new BudgetReport(List.of()));
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    when(capi.recordWorkerPoolVersion(any()))
        .thenReturn(new BookkeepingResult(List.of("MachineSet worker-a-ms-1 version " + TO, "MachineDeployment worker-a version " + TO)));
  }

  private void pool(int size) {
    doReturn(inventory(concat(controlPlanes(3, TO), workers(POOL, size, FROM)))).when(capi).describeCluster(any());
  }

  private static WorkersUpgradeRequest request(String maxUnavailable) {
    return new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), maxUnavailable, FailurePolicy.HALT, 0, 0, null, null);
  }

  private static WorkersUpgradeRequest request(
      String maxUnavailable, FailurePolicy policy, int maxFailures, long soakSeconds, MaintenanceWindow window) {
    return new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), maxUnavailable, policy, maxFailures, soakSeconds, window, null);
  }

  private WorkersUpgradeWorkflow start(TestWorkflowEnvironment env, Worker worker) {
    return start(env, worker, WorkersUpgradeWorkflowImpl.DEFAULT_HISTORY_LIMIT);
  }

  private WorkersUpgradeWorkflow start(TestWorkflowEnvironment env, Worker worker, int historyLimit) {
    worker.registerWorkflowImplementationFactory(
        WorkersUpgradeWorkflow.class, () -> new WorkersUpgradeWorkflowImpl(historyLimit));
    worker.registerWorkflowImplementationFactory(NodeUpgradeWorkflow.class, () -> new FakeNodeUpgrade(script));
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    return env.getWorkflowClient()
        .newWorkflowStub(
            WorkersUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  private static WorkersUpgradeResult resultOf(WorkersUpgradeWorkflow run) {
    try {
      return WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, WorkersUpgradeResult.class);
    } catch (TimeoutException e) {
      return fail("the run did not end within 60 s: " + run.progress());
    }
  }

  private void assertEveryNodeUpgradedOnce(int size) {
    for (int i = 1; i <= size; i++) {
      assertEquals(1, script.upgradesOf(POOL + "-" + i), POOL + "-" + i + " upgraded once");
    }
  }

  @Test
  void neverRunsMoreChildrenThanACountAllows(TestWorkflowEnvironment env, Worker worker) {
    pool(7);
    script.takes(POOL + "-1", Duration.ofMinutes(25)).takes(POOL + "-3", Duration.ofMinutes(3));

    WorkersUpgradeResult result = start(env, worker).upgrade(request("2"));

    assertEquals(2, script.maxConcurrent());
    assertEquals(7, result.upgraded());
    assertEquals(1, result.runs());
    assertEveryNodeUpgradedOnce(7);
    verify(capi, times(1)).recordWorkerPoolVersion(
        argThat(r -> POOL.equals(r.machineDeployment()) && TO.equals(r.version()) && workflowId.equals(r.owner())
            && "fleet".equals(r.namespace())));
    for (int i = 1; i <= 7; i++) {
      String machine = "edge-1-" + POOL + "-" + i;
      verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", machine, true, workflowId));
      verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", machine, false, workflowId));
    }
  }

  @Test
  void aPercentWindowRoundsUp(TestWorkflowEnvironment env, Worker worker) {
    pool(7);
    WorkersUpgradeWorkflow run = start(env, worker);

    WorkersUpgradeResult result = run.upgrade(request("40%"));

    assertEquals(3, script.maxConcurrent(), "40% of 7 nodes is 2.8, rounded up to 3");
    assertEquals(7, result.upgraded());
    assertEquals(3, run.progress().window());
  }

  @Test
  void setMaxUnavailableWidensTheWindowMidRun(TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("1"));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);
    assertEquals(1, script.maxConcurrent());

    String answer = run.setMaxUnavailable("3");

    assertEquals("maxUnavailable 3: up to 3 node(s) at once", answer);
    WorkersUpgradeResult result = resultOf(run);
    assertEquals(3, script.maxConcurrent());
    assertEquals(6, result.upgraded());
    assertEquals("3", run.progress().maxUnavailable());
  }

  @Test
  void pauseStopsNewStartsAndResumeContinues(TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("2"));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 2);

    run.pause();
    UpgradeProgress paused = awaitProgress(env, run, Duration.ofMinutes(5), p -> p.inFlight() == 0);
    env.sleep(Duration.ofHours(3));

    assertEquals(RunPhase.PAUSED, run.progress().phase());
    assertTrue(paused.paused());
    assertEquals(2, paused.upgraded());
    assertEquals(2, script.starts().size(), "no node starts while paused");

    run.resume();

    assertEquals(6, resultOf(run).upgraded());
    assertEveryNodeUpgradedOnce(6);
  }

  @Test
  void haltLetsInFlightNodesFinishStartsNoneAndRetryNodeContinues(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce(POOL + "-2", UpgradeStep.DRAIN, UpgradeFailures.DRAIN_BLOCKED, NodePhase.ROLLED_BACK, Duration.ofMinutes(2));
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("2"));

    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);
    env.sleep(Duration.ofHours(2));

    UpgradeProgress halted = run.progress();
    assertEquals(RunPhase.HALTED, halted.phase());
    assertEquals(NodePhase.UPGRADED, node(halted, POOL + "-1").phase(), "the node in flight finished");
    assertEquals(UpgradeFailures.DRAIN_BLOCKED, node(halted, POOL + "-2").reason());
    assertEquals(UpgradeStep.DRAIN, node(halted, POOL + "-2").step());
    // Children of one window start in whatever order their Machines were marked.
    assertEquals(Set.of(POOL + "-1", POOL + "-2"), Set.copyOf(script.starts()), "no node starts while halted");
    assertEquals(2, script.starts().size());

    run.retryNode(POOL + "-2");

    WorkersUpgradeResult result = resultOf(run);
    assertEquals(6, result.upgraded());
    assertTrue(script.starts().subList(2, 4).contains(POOL + "-2"), "the retried node is among the next to start: " + script.starts());
    assertEveryNodeUpgradedOnce(6);
    verify(capi, times(1)).recordWorkerPoolVersion(any());
  }

  @Test
  void skipNodeAfterAHaltFinishesWithoutRecordingThePool(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce(POOL + "-3", UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, NodePhase.ROLLBACK_FAILED, Duration.ofMinutes(2));
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("3"));
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);

    run.skipNode(POOL + "-3");

    WorkersUpgradeResult result = resultOf(run);
    assertEquals(5, result.upgraded());
    assertEquals(1, result.skipped());
    verify(capi, never()).recordWorkerPoolVersion(any());
    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.SUCCEEDED, progress.phase());
    assertTrue(progress.message().contains("not recorded on MachineDeployment " + POOL), progress.message());
  }

  @Test
  void continuePolicyFinishesWithFailuresCountedAndNoPoolRecord(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce(POOL + "-2", UpgradeStep.RESTART, UpgradeFailures.SERVICE_RESTART_FAILED, NodePhase.ROLLED_BACK, Duration.ofMinutes(1));
    WorkersUpgradeWorkflow run = start(env, worker);

    WorkersUpgradeResult result = run.upgrade(request("2", FailurePolicy.CONTINUE, 1, 0, null));

    assertEquals(5, result.upgraded());
    assertEquals(1, result.failed());
    assertEquals(6, script.starts().size());
    verify(capi, never()).recordWorkerPoolVersion(any());
    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.FAILED, progress.phase());
    assertTrue(progress.message().contains("5/6 upgraded, 1 failed"), progress.message());
  }

  @Test
  void continuePolicyHaltsBeyondMaxFailures(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce(POOL + "-1", UpgradeStep.RESTART, UpgradeFailures.SERVICE_RESTART_FAILED, NodePhase.ROLLED_BACK, Duration.ofMinutes(1))
        .failsOnce(POOL + "-2", UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, NodePhase.ROLLED_BACK, Duration.ofMinutes(2));
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("2", FailurePolicy.CONTINUE, 1, 0, null));

    // worker-a-1 fails (tolerated) and worker-a-3 takes its place; worker-a-2's failure is one too many.
    UpgradeProgress halted = awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);
    env.sleep(Duration.ofHours(2));

    assertEquals(2, halted.failed());
    assertEquals(1, halted.upgraded());
    List<String> starts = script.starts();
    assertEquals(3, starts.size(), starts.toString());
    assertEquals(Set.of(POOL + "-1", POOL + "-2"), Set.copyOf(starts.subList(0, 2)));
    assertEquals(POOL + "-3", starts.get(2));
    assertTrue(halted.message().contains("halted: " + POOL + "-1 failed at restart"), halted.message());
    run.abort();
    WorkersUpgradeResult result = resultOf(run);
    assertTrue(result.aborted());
    assertEquals(1, result.upgraded());
    assertEquals(2, result.failed());
  }

  @Test
  void refusesWhenTheControlPlaneIsNotAtTheTarget(TestWorkflowEnvironment env, Worker worker) {
    doReturn(inventory(concat(controlPlanes(3, FROM), workers(POOL, 6, FROM)))).when(capi).describeCluster(any());

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request("2")));

    assertRefused(e, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "control plane not at " + TO + ": cp-1 runs " + FROM);
  }

  @Test
  void refusesWhenTheHealthGateSeesAControlPlaneBehind(TestWorkflowEnvironment env, Worker worker) {
    doThrow(UpgradeFailures.nonRetryable(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, "cp-2 kubelet " + FROM + ", expected " + TO))
        .when(nodes).awaitControlPlaneHealthy(any());

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request("2")));

    assertRefused(e, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "control plane not at " + TO + ": cp-2 kubelet");
    verify(nodes).awaitControlPlaneHealthy(
        argThat(r -> r.timeoutSeconds() == 60 && r.requireEtcdVoters() && r.nodes().stream().allMatch(n -> TO.equals(n.version()))));
  }

  @Test
  void theStartChecksReadTheGateTheArtifactsAndTheBudgetsAtOnce(TestWorkflowEnvironment env, Worker worker) {
    java.util.concurrent.CountDownLatch othersStarted = new java.util.concurrent.CountDownLatch(2);
    when(hosts.verifyArtifacts(any())).thenAnswer(i -> {
      othersStarted.countDown();
      return new ArtifactCheckResult(List.of("k3s", "k3s-airgap-images"));
    });
    when(nodes.listBlockingBudgets(any())).thenAnswer(i -> {
      othersStarted.countDown();
      return new BudgetReport(List.of());
    });
    when(nodes.awaitControlPlaneHealthy(any())).thenAnswer(i -> {
      if (!othersStarted.await(20, TimeUnit.SECONDS)) {
        throw UpgradeFailures.nonRetryable(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, "the gate ran alone");
      }
      return new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3"));
    });

    assertEquals(6, start(env, worker).upgrade(request("2")).upgraded());
  }

  @Test
  void whenTheGateAndTheArtifactsBothFailTheGatesRefusalIsReported(TestWorkflowEnvironment env, Worker worker) {
    doThrow(UpgradeFailures.nonRetryable(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, "cp-2 kubelet " + FROM + ", expected " + TO))
        .when(nodes).awaitControlPlaneHealthy(any());
    when(hosts.verifyArtifacts(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ARTIFACT_UNAVAILABLE, "k3s: 404 Not Found"));

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request("2")));

    assertRefused(e, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "control plane not at " + TO + ": cp-2 kubelet");
    verify(capi, never()).markMachineUpgrading(any());
  }

  @Test
  void refusesAnUnknownMachineDeploymentNamingTheOnesThatExist(TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeRequest wrong = new WorkersUpgradeRequest(
        Fixtures.CLUSTER, "worker-z", ParentFixtures.template(), "1", FailurePolicy.HALT, 0, 0, null, null);

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(wrong));

    assertRefused(e, UpgradeFailures.INVALID_REQUEST, "worker-z not found in cluster fleet/edge-1; it has: worker-a, worker-b");
  }

  @Test
  void refusesToSkipAMinorVersionInThePool(TestWorkflowEnvironment env, Worker worker) {
    List<MachineInfo> pool = new ArrayList<>(workers(POOL, 3, FROM));
    pool.set(1, ParentFixtures.worker(POOL, 2, "v1.29.3+k3s1"));
    doReturn(inventory(concat(controlPlanes(3, TO), pool))).when(capi).describeCluster(any());

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request("2")));

    assertRefused(e, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, POOL + "-2 runs v1.29.3+k3s1");
  }

  private void assertRefused(WorkflowFailedException e, String type, String text) {
    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(type, failure.getType(), failure.getOriginalMessage());
    assertTrue(failure.getOriginalMessage().contains(text), failure.getOriginalMessage());
    verify(capi, never()).markMachineUpgrading(any());
    verify(capi, never()).recordWorkerPoolVersion(any());
    assertEquals(List.of(), script.starts());
  }

  @Test
  void continuesAsNewWithEveryNodeUpgradedExactlyOnce(TestWorkflowEnvironment env, Worker worker) {
    int size = 14;
    pool(size);
    // Seconds, in real time: a run hands its nodes in flight over, and once a child outlives the
    // run that started it the test server no longer skips time (HandOverTest).
    script.everyNodeTakes(Duration.ofSeconds(1));
    WorkersUpgradeWorkflow run = start(env, worker, 60);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("2"));

    WorkersUpgradeResult result = resultOf(run);

    assertTrue(result.runs() > 2, "runs: " + result.runs());
    assertEquals(size, result.upgraded());
    assertEquals(size, result.nodes().size());
    assertEveryNodeUpgradedOnce(size);
    assertEquals(size, script.starts().size());
    assertEquals(2, script.maxConcurrent());
    verify(capi, times(1)).describeCluster(any());
    verify(nodes, times(1)).awaitControlPlaneHealthy(any());
    verify(capi, times(1)).recordWorkerPoolVersion(any());
    List<Integer> lengths = runLengths(env, first);
    assertEquals(result.runs(), lengths.size());
    // Each run stops starting nodes past the limit; only the nodes then in flight add to it.
    assertTrue(lengths.stream().allMatch(n -> n < 60 + 2 * 30), "history lengths per run: " + lengths);
  }

  @Test
  void aThousandNodePoolIsOneLogicalRunOfShortHistories(TestWorkflowEnvironment env, Worker worker) {
    int size = 1000;
    pool(size);
    // Real time after the first hand-over (see continuesAsNewWithEveryNodeUpgradedExactlyOnce).
    script.everyNodeTakes(Duration.ofSeconds(2));
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("10%"));

    WorkersUpgradeResult result;
    try {
      // A guard against a hang, not a speed target (that is ./inplace bench): generous, because
      // 1,000 children on a loaded 2-core machine take minutes of CPU.
      result = WorkflowStub.fromTyped(run).getResult(480, TimeUnit.SECONDS, WorkersUpgradeResult.class);
    } catch (TimeoutException e) {
      throw new AssertionError("1,000 nodes did not finish in 480 s", e);
    }

    assertEquals(size, result.upgraded());
    assertEveryNodeUpgradedOnce(size);
    assertTrue(script.maxConcurrent() <= 100 && script.maxConcurrent() >= 90, "window of 100: " + script.maxConcurrent());
    List<Integer> lengths = runLengths(env, first);
    assertEquals(result.runs(), lengths.size());
    assertTrue(result.runs() > 1);
    assertTrue(lengths.stream().allMatch(n -> n <= WorkersUpgradeWorkflowImpl.DEFAULT_HISTORY_LIMIT + 100 && n < 10_000),
        "history lengths per run: " + lengths);
    verify(capi, times(1)).recordWorkerPoolVersion(any());
  }

  /** The history length of every run of a logical run, following the continue-as-new chain. */
  private List<Integer> runLengths(TestWorkflowEnvironment env, WorkflowExecution first) {
    List<Integer> lengths = new ArrayList<>();
    String runId = first.getRunId();
    while (runId != null) {
      WorkflowExecutionHistory history = env.getWorkflowClient().fetchHistory(workflowId, runId);
      lengths.add(history.getEvents().size());
      HistoryEvent last = history.getLastEvent();
      runId = last.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW
          ? last.getWorkflowExecutionContinuedAsNewEventAttributes().getNewExecutionRunId()
          : null;
    }
    return lengths;
  }

  @Test
  void abortMidRunFinishesInFlightNodesAndStartsNoMore(TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("2"));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 2);

    run.abort();
    refused(run::abort, "already aborting");
    refused(run::pause, "aborting");

    WorkersUpgradeResult result = resultOf(run);
    assertTrue(result.aborted());
    assertEquals(2, result.upgraded());
    assertEquals(2, script.starts().size());
    verify(capi, never()).recordWorkerPoolVersion(any());
    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.ABORTED, progress.phase());
    assertEquals(4, progress.nodes().stream().filter(n -> n.phase() == NodePhase.PENDING).count());
  }

  /** Monday 2026-01-05 20:00 UTC: two hours before the nightly window opens. */
  @Test
  @WorkflowInitialTime("2026-01-05T20:00:00Z")
  void startsNoNodeOutsideTheMaintenanceWindow(TestWorkflowEnvironment env, Worker worker) {
    MaintenanceWindow window = new MaintenanceWindow(List.of(), "22:00", "02:00", "UTC");
    pool(5);
    script.everyNodeTakes(Duration.ofMinutes(60));
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("1", FailurePolicy.HALT, 0, 0, window));

    UpgradeProgress waiting = awaitProgress(env, run, Duration.ofSeconds(1), p -> p.phase() == RunPhase.WAITING_FOR_WINDOW);
    assertTrue(waiting.message().contains("opens at 2026-01-05T22:00:00Z"), waiting.message());

    assertEquals(5, resultOf(run).upgraded());
    List<ChildScript.Run> runs = script.runs();
    for (ChildScript.Run r : runs) {
      assertEquals(Duration.ZERO, window.waitFrom(r.startedMillis()), r.node() + " started at " + Instant.ofEpochMilli(r.startedMillis()));
    }
    assertStartsWithinAMinuteOf("2026-01-05T22:00:00Z", runs.get(0));
    assertStartsWithinAMinuteOf("2026-01-06T22:00:00Z", runs.get(4));
  }

  private static void assertStartsWithinAMinuteOf(String expected, ChildScript.Run run) {
    long delta = run.startedMillis() - Instant.parse(expected).toEpochMilli();
    assertTrue(delta >= 0 && delta < 60_000, run.node() + " started at " + Instant.ofEpochMilli(run.startedMillis()));
  }

  @Test
  void soakDelaysTheNextStart(TestWorkflowEnvironment env, Worker worker) {
    pool(3);
    WorkersUpgradeWorkflow run = start(env, worker);

    run.upgrade(request("1", FailurePolicy.HALT, 0, 1800, null));

    List<ChildScript.Run> runs = script.runs();
    assertEquals(3, runs.size());
    for (int i = 1; i < runs.size(); i++) {
      long gap = runs.get(i).startedMillis() - runs.get(i - 1).finishedMillis();
      assertTrue(gap >= Duration.ofMinutes(30).toMillis(), "gap before " + runs.get(i).node() + ": " + gap + " ms");
    }
  }

  @Test
  void invalidControlsAreRefusedByTheValidators(TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request("1"));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);

    for (String bad : List.of("0", "0%", "150%", "abc", "")) {
      refused(() -> run.setMaxUnavailable(bad), "maxUnavailable must be a count of at least 1");
    }
    refused(run::resume, "not paused");
    refused(() -> run.retryNode(POOL + "-2"), "is PENDING; only a FAILED, ROLLED_BACK or ROLLBACK_FAILED node can be retried");
    refused(() -> run.retryNode("nope"), "unknown node 'nope'");
    refused(() -> run.skipNode(POOL + "-1"), "is in flight");
    assertTrue(run.skipNode("edge-1-" + POOL + "-6").contains(POOL + "-6 skipped"), "a pending node may be skipped by Machine name");
    refused(() -> run.skipNode(POOL + "-6"), "already skipped");

    WorkersUpgradeResult result = resultOf(run);
    assertEquals(5, result.upgraded());
    assertEquals(1, result.skipped());
    assertFalse(script.starts().contains(POOL + "-6"));
  }

  /**
   * Regenerates the committed replay histories (run with {@code -Dhistories.update=true}): a pool that
   * continues as new, with an Update in its first run; {@link ParentUpgradeReplayTest} replays both
   * runs on every build.
   */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordReplayHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(
        "workers-upgrade-first-run-mark-owner.json", "workers-upgrade-last-run-mark-owner.json");
    pool(8);
    WorkersUpgradeWorkflow run = start(env, worker, 60);
    WorkflowExecution first = WorkflowClient.start(run::upgrade, request("1"));
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);
    run.setMaxUnavailable("2");
    WorkersUpgradeResult result = resultOf(run);
    assertTrue(result.runs() > 1, "runs: " + result.runs());
    HistoryFixtures.record(env, workflowId, first.getRunId(), "workers-upgrade-first-run-mark-owner.json");
    HistoryFixtures.record(env, workflowId, null, "workers-upgrade-last-run-mark-owner.json");
  }

  private static void refused(Executable update, String text) {
    WorkflowUpdateException e = assertThrows(WorkflowUpdateException.class, update);
    String message = rootMessage(e);
    assertTrue(message.contains(text), message);
  }
}
