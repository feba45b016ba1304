package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertFalse;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ChildReports;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordResult;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.BackupResult;
import dev.inplace.workflows.api.HostActivities.InstallResult;
import dev.inplace.workflows.api.HostActivities.RestoreResult;
import dev.inplace.workflows.api.HostActivities.ServiceResult;
import dev.inplace.workflows.api.HostActivities.StageResult;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.AwaitNodeRequest;
import dev.inplace.workflows.api.NodeActivities.CordonResult;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodeVersion;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeActivities.UncordonResult;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.Async;
import io.temporal.failure.ChildWorkflowFailure;
import io.temporal.api.enums.v1.EventType;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import io.temporal.workflow.ChildWorkflowOptions;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * One committed history per path through a NodeUpgrade run that the happy-path and rollback
 * fixtures do not take: already at the target, refused in preflight, failed before anything
 * changed, a rollback that fails, a cancellation, the run's own Machine mark (failing, and around a
 * rollback), and a failure after verify. They were recorded from the implementation before it was
 * split into collaborators; {@link NodeUpgradeReplayTest} replays them all, so the split (and any
 * later refactoring) keeps every path's command order.
 */
class NodeUpgradePathHistoriesTest {

  /** The path fixtures: each must stay committed (and replayed). */
  static final List<String> PATHS = List.of(
      "node-upgrade-path-already-at-target.json",
      "node-upgrade-path-already-at-target-own-cordon.json",
      "node-upgrade-path-refused-downgrade.json",
      "node-upgrade-path-staging-failed.json",
      "node-upgrade-path-rolled-back-at-cordon.json",
      "node-upgrade-path-rollback-failed.json",
      "node-upgrade-path-cancelled-during-drain.json",
      "node-upgrade-path-mark-failed.json",
      "node-upgrade-path-rolled-back-own-machine-mark.json",
      "node-upgrade-path-uncordon-failed.json");

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow =
      TestWorkflowExtension.newBuilder()
          .registerWorkflowImplementationTypes(
              NodeUpgradeWorkflowImpl.class, StagingParentImpl.class, EndingParentImpl.class, GoneParentImpl.class)
          .registerSearchAttribute("InplaceCluster", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceKind", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceTargetVersion", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceNode", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST)
          .registerSearchAttribute("InplacePhase", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .setDoNotStart(true)
          .build();

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = mock(ClusterApiActivities.class, withSettings().withoutAnnotations());
  private final NodeUpgradeRequest request = Fixtures.request("worker-1", NodeRole.WORKER);

  @BeforeEach
  void healthyEstate() {
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", FROM));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    when(hosts.stageArtifacts(any())).thenReturn(new StageResult(List.of("k3s"), List.of(), 72 << 20));
    when(nodes.cordonNode(any())).thenReturn(new CordonResult(true, false));
    when(nodes.drainNode(any())).thenReturn(new DrainResult(3, 0, 1, 0, 2));
    when(hosts.backupBinaries(any())).thenReturn(new BackupResult(List.of("/usr/local/bin/k3s"), List.of()));
    when(hosts.installArtifacts(any())).thenReturn(new InstallResult(List.of("k3s"), List.of()));
    when(hosts.restartService(any())).thenReturn(new ServiceResult("k3s-agent", true));
    when(nodes.awaitNodeVersion(argThat(r -> r != null && TO.equals(r.expectedVersion()))))
        .thenReturn(Fixtures.readyAt("worker-1", TO));
    when(nodes.awaitNodeVersion(argThat(r -> r != null && FROM.equals(r.expectedVersion()))))
        .thenReturn(Fixtures.readyAt("worker-1", FROM));
    when(nodes.uncordonNode(any())).thenReturn(new UncordonResult(true, ""));
    when(hosts.restoreBinaries(any()))
        .thenReturn(new RestoreResult(List.of("/usr/local/bin/k3s"), List.of(), true));
    when(capi.recordMachineUpgrade(any())).thenReturn(new MachineRecordResult(FROM, List.of("recorded")));
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    when(nodes.controlPlaneVersions(any()))
        .thenReturn(new NodeVersions(List.of(new NodeVersion("cp-1", TO))));
  }

  @Test
  void everyPathFixtureIsCommittedAndReplayed() throws Exception {
    assertCommittedAndReplayed(PATHS, null);
    assertEquals(PATHS.size(), PATHS.stream().distinct().count());
  }

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPathHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(PATHS.toArray(String[]::new));
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();

    // Already at the target, not cordoned: every step skipped, the Machine recorded.
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", TO));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithNewRelease());
    NodeUpgradeResult done = stub(env, worker, "already-at-target").upgrade(request);
    assertTrue(done.alreadyAtTarget());
    record(env, "already-at-target", "node-upgrade-path-already-at-target.json");

    // Already at the target but cordoned by an earlier run of this ID: released, then recorded.
    String ownCordon = id("already-at-target-own-cordon");
    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", true, true, TO, ownCordon));
    stub(env, worker, "already-at-target-own-cordon").upgrade(request);
    record(env, "already-at-target-own-cordon", "node-upgrade-path-already-at-target-own-cordon.json");

    // A downgrade: refused after inspection, nothing changed.
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", "v1.31.5+k3s1"));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    assertThrows(WorkflowFailedException.class, () -> stub(env, worker, "refused-downgrade").upgrade(request));
    record(env, "refused-downgrade", "node-upgrade-path-refused-downgrade.json");
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", FROM));

    // Staging fails: no compensation registered yet.
    when(hosts.stageArtifacts(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ARTIFACT_DIGEST_MISMATCH, "digest differs"))
        .thenReturn(new StageResult(List.of("k3s"), List.of(), 72 << 20));
    assertThrows(WorkflowFailedException.class, () -> stub(env, worker, "staging-failed").upgrade(request));
    record(env, "staging-failed", "node-upgrade-path-staging-failed.json");

    // Cordon fails: only the release compensation runs.
    when(nodes.cordonNode(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.KUBERNETES_API_ERROR, "injected at cordon"))
        .thenReturn(new CordonResult(true, false));
    assertThrows(WorkflowFailedException.class, () -> stub(env, worker, "rolled-back-at-cordon").upgrade(request));
    record(env, "rolled-back-at-cordon", "node-upgrade-path-rolled-back-at-cordon.json");

    // Restart fails and so does the restore: the node stays cordoned.
    when(hosts.restartService(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.SERVICE_RESTART_FAILED, "injected at restart"))
        .thenReturn(new ServiceResult("k3s-agent", true));
    when(hosts.restoreBinaries(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ROLLBACK_FAILED, "backup missing"))
        .thenReturn(new RestoreResult(List.of("/usr/local/bin/k3s"), List.of(), true));
    assertThrows(WorkflowFailedException.class, () -> stub(env, worker, "rollback-failed").upgrade(request));
    record(env, "rollback-failed", "node-upgrade-path-rollback-failed.json");

    // The run's own mark cannot be set: nothing else happens.
    when(capi.markMachineUpgrading(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.KUBERNETES_API_ERROR, "forbidden"))
        .thenReturn(new MachineMarkResult(true));
    assertThrows(WorkflowFailedException.class,
        () -> stub(env, worker, "mark-failed").upgrade(request.withMarkMachine(true)));
    record(env, "mark-failed", "node-upgrade-path-mark-failed.json");

    // The run's own mark around a rollback at verify: removed after the compensations.
    when(nodes.awaitNodeVersion(argThat((AwaitNodeRequest r) -> r != null && TO.equals(r.expectedVersion()))))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.VERIFY_TIMEOUT, "injected at verify"))
        .thenReturn(Fixtures.readyAt("worker-1", TO));
    assertThrows(WorkflowFailedException.class,
        () -> stub(env, worker, "rolled-back-own-machine-mark").upgrade(request.withMarkMachine(true)));
    record(env, "rolled-back-own-machine-mark", "node-upgrade-path-rolled-back-own-machine-mark.json");

    // Uncordon fails after verify: no rollback, the node runs the target.
    when(nodes.uncordonNode(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.KUBERNETES_API_ERROR, "injected at uncordon"))
        .thenReturn(new UncordonResult(true, ""));
    assertThrows(WorkflowFailedException.class, () -> stub(env, worker, "uncordon-failed").upgrade(request));
    record(env, "uncordon-failed", "node-upgrade-path-uncordon-failed.json");

    // Cancelled while draining: the compensations run detached from the cancellation.
    CountDownLatch draining = new CountDownLatch(1);
    when(nodes.drainNode(any())).thenAnswer(inv -> {
      draining.countDown();
      var ctx = io.temporal.activity.Activity.getExecutionContext();
      while (true) {
        ctx.heartbeat(null);
        Thread.sleep(50);
      }
    });
    NodeUpgradeWorkflow cancelled = stub(env, worker, "cancelled-during-drain");
    WorkflowClient.start(cancelled::upgrade, request);
    assertTrue(draining.await(30, TimeUnit.SECONDS));
    WorkflowStub untyped = WorkflowStub.fromTyped(cancelled);
    untyped.cancel();
    assertThrows(WorkflowFailedException.class, () -> untyped.getResult(60, TimeUnit.SECONDS, NodeUpgradeResult.class));
    record(env, "cancelled-during-drain", "node-upgrade-path-cancelled-during-drain.json");
  }

  /** The permit path's fixtures (node-upgrade-waits-for-permit), recorded by {@link #recordPermitPathHistories}. */
  static final List<String> PERMIT_PATHS = List.of(
      "node-upgrade-path-permitted.json",
      "node-upgrade-path-changed-while-waiting.json",
      "node-upgrade-path-stood-down.json");

  /** Each versioned path's fixtures and the change ID whose marker they carry. */
  static Stream<Arguments> versionedPathFixtures() {
    return Stream.of(
        Arguments.of(PERMIT_PATHS, NodeUpgradeWorkflowImpl.PERMIT_CHANGE),
        Arguments.of(List.of(REPORTED_STAGED), NodeUpgradeWorkflowImpl.STAGED_REPORT_CHANGE),
        Arguments.of(List.of(BACKED_UP_BEFORE_CORDON), NodeUpgradeWorkflowImpl.BACKUP_BEFORE_CORDON_CHANGE),
        Arguments.of(List.of(REPORTED_END), NodeUpgradeWorkflowImpl.END_REPORT_CHANGE),
        Arguments.of(List.of(READS_AT_ONCE, READS_AT_ONCE_HOST_FAILED),
            NodeUpgradeWorkflowImpl.PREFLIGHT_READS_AT_ONCE_CHANGE),
        Arguments.of(List.of(HOST_CONFIRMED, HOST_REFUSED), NodeUpgradeWorkflowImpl.HOST_ACCESS_CHANGE));
  }

  @ParameterizedTest(name = "{1}")
  @MethodSource("versionedPathFixtures")
  void everyVersionedPathFixtureIsCommittedReplayedAndCarriesItsMarker(List<String> fixtures, String changeId)
      throws Exception {
    assertCommittedAndReplayed(fixtures, changeId);
  }

  /** Each fixture is committed, replayed by {@link NodeUpgradeReplayTest} and, given a change ID, carries its marker. */
  private static void assertCommittedAndReplayed(List<String> fixtures, String changeId) throws Exception {
    List<String> replayed = NodeUpgradeReplayTest.histories().stream().map(p -> p.getFileName().toString()).toList();
    for (String path : fixtures) {
      assertTrue(Files.exists(HistoryFixtures.DIR.resolve(path)), path + " is not committed");
      assertTrue(replayed.contains(path), path + " is not replayed");
      if (changeId != null) {
        assertEquals(1, HistoryFixtures.versionMarkers(HistoryFixtures.read(HistoryFixtures.DIR.resolve(path)))
            .get(changeId), path + " carries the marker of " + changeId);
      }
    }
  }

  /** Runs asked to wait for a permit: permitted; refused when their Node changed meanwhile; stood down. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPermitPathHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(PERMIT_PATHS.toArray(String[]::new));
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    NodeUpgradeRequest waiting = request.withAwaitPermit(true);

    NodeUpgradeWorkflow permitted = prepared(env, worker, "permitted", waiting);
    permitted.permit();
    WorkflowStub.fromTyped(permitted).getResult(60, TimeUnit.SECONDS, NodeUpgradeResult.class);
    record(env, "permitted", "node-upgrade-path-permitted.json");

    when(nodes.inspectNode(any()))
        .thenReturn(Fixtures.readyAt("worker-1", FROM))
        .thenReturn(new NodeState("worker-1", false, false, FROM, null));
    NodeUpgradeWorkflow changed = prepared(env, worker, "changed-while-waiting", waiting);
    changed.permit();
    assertThrows(WorkflowFailedException.class,
        () -> WorkflowStub.fromTyped(changed).getResult(60, TimeUnit.SECONDS, NodeUpgradeResult.class));
    record(env, "changed-while-waiting", "node-upgrade-path-changed-while-waiting.json");
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", FROM));

    NodeUpgradeWorkflow stoodDown = prepared(env, worker, "stood-down", waiting);
    WorkflowStub.fromTyped(stoodDown).cancel();
    assertThrows(WorkflowFailedException.class,
        () -> WorkflowStub.fromTyped(stoodDown).getResult(60, TimeUnit.SECONDS, NodeUpgradeResult.class));
    record(env, "stood-down", "node-upgrade-path-stood-down.json");
  }

  /** The reported-staged path's fixture (node-upgrade-reports-staged), a child of {@link StagingParent}. */
  static final String REPORTED_STAGED = "node-upgrade-path-reported-staged.json";

  /** A parent that starts one NodeUpgrade asked to report staging and returns the nodes it was told were staged. */
  @WorkflowInterface
  public interface StagingParent extends ChildReports {
    @WorkflowMethod
    List<String> upgrade(NodeUpgradeRequest request, String childId);
  }

  public static class StagingParentImpl implements StagingParent {
    private final List<String> staged = new ArrayList<>();

    @Override
    public List<String> upgrade(NodeUpgradeRequest request, String childId) {
      Workflow.newChildWorkflowStub(NodeUpgradeWorkflow.class,
              ChildWorkflowOptions.newBuilder().setWorkflowId(childId).build())
          .upgrade(request.withReportStaged(true));
      return staged;
    }

    @Override
    public void nodeStaged(String node) {
      staged.add(node);
    }
  }

  private List<String> upgradeUnderStagingParent(TestWorkflowEnvironment env, Worker worker, String childId) {
    return parentOf(env, worker, StagingParent.class, childId).upgrade(request, childId);
  }

  /** A stand-in parent (workflow ID {@code <childId>-parent}) on the started test environment. */
  private <P> P parentOf(TestWorkflowEnvironment env, Worker worker, Class<P> type, String childId) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(type,
        WorkflowOptions.newBuilder().setWorkflowId(childId + "-parent").setTaskQueue(worker.getTaskQueue()).build());
  }

  @Test
  void aRunAskedToReportStagingTellsItsParentAfterStagingAndBeforeItCordons(TestWorkflowEnvironment env, Worker worker) {
    assertEquals(List.of("worker-1"), upgradeUnderStagingParent(env, worker, "reports-staged"));

    List<String> events = new ArrayList<>();
    for (HistoryEvent e : env.getWorkflowClient().fetchHistory("reports-staged").getEvents()) {
      events.add(e.hasActivityTaskScheduledEventAttributes()
          ? e.getActivityTaskScheduledEventAttributes().getActivityType().getName()
          : e.getEventType().name());
    }
    int signalled = events.indexOf("EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED");
    assertTrue(signalled > events.indexOf("StageArtifacts"), events.toString());
    assertTrue(signalled < events.indexOf("CordonNode"), events.toString());
    assertEquals(signalled, events.lastIndexOf("EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED"), "one signal");
  }

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordReportedStagedPath(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(REPORTED_STAGED);
    String childId = id("reported-staged");
    assertEquals(List.of("worker-1"), upgradeUnderStagingParent(env, worker, childId));
    record(env, "reported-staged", REPORTED_STAGED);
  }

  /** The reported-end path's fixture (node-upgrade-reports-end), a child of {@link EndingParent}. */
  static final String REPORTED_END = "node-upgrade-path-reported-end.json";

  /** A parent that starts one NodeUpgrade asked to report its end and returns the reports it received. */
  @WorkflowInterface
  public interface EndingParent {
    @WorkflowMethod
    List<NodeEnd> upgrade(NodeUpgradeRequest request, String childId);

    @SignalMethod(name = WorkersUpgradeWorkflow.NODE_ENDED)
    void nodeEnded(NodeEnd end);
  }

  public static class EndingParentImpl implements EndingParent {
    private final List<NodeEnd> ends = new ArrayList<>();

    @Override
    public List<NodeEnd> upgrade(NodeUpgradeRequest request, String childId) {
      try {
        Workflow.newChildWorkflowStub(NodeUpgradeWorkflow.class,
                ChildWorkflowOptions.newBuilder().setWorkflowId(childId).build())
            .upgrade(request.withReportEnd(true));
      } catch (ChildWorkflowFailure e) {
        // the report says how it failed
      }
      Workflow.await(() -> !ends.isEmpty());
      return ends;
    }

    @Override
    public void nodeEnded(NodeEnd end) {
      ends.add(end);
    }
  }

  /** A parent that starts one NodeUpgrade asked to report its end, abandoned, and ends once it has started. */
  @WorkflowInterface
  public interface GoneParent {
    @WorkflowMethod
    void upgrade(NodeUpgradeRequest request, String childId);
  }

  public static class GoneParentImpl implements GoneParent {
    @Override
    public void upgrade(NodeUpgradeRequest request, String childId) {
      NodeUpgradeWorkflow child = Workflow.newChildWorkflowStub(NodeUpgradeWorkflow.class,
          ChildWorkflowOptions.newBuilder().setWorkflowId(childId)
              .setParentClosePolicy(io.temporal.api.enums.v1.ParentClosePolicy.PARENT_CLOSE_POLICY_ABANDON).build());
      Async.function(child::upgrade, request.withReportEnd(true));
      Workflow.getWorkflowExecution(child).get();
    }
  }

  @Test
  void aRunWhoseParentIsGoneTriesItsReportTenTimesASecondApartAndStillEnds(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    parentOf(env, worker, GoneParent.class, "reports-to-nobody").upgrade(request, "reports-to-nobody");

    NodeUpgradeResult result = env.getWorkflowClient().newUntypedWorkflowStub("reports-to-nobody")
        .getResult(60, TimeUnit.SECONDS, NodeUpgradeResult.class);

    assertEquals(TO, result.version());
    List<HistoryEvent> events = env.getWorkflowClient().fetchHistory("reports-to-nobody").getEvents();
    assertEquals(EndReport.ATTEMPTS, events.stream()
        .filter(e -> e.getEventType() == EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_FAILED).count());
    assertEquals(EndReport.ATTEMPTS - 1, events.stream()
        .filter(e -> e.getEventType() == EventType.EVENT_TYPE_TIMER_STARTED).count(), "a second between attempts");
  }

  private List<NodeEnd> upgradeUnderEndingParent(TestWorkflowEnvironment env, Worker worker, String childId) {
    return parentOf(env, worker, EndingParent.class, childId).upgrade(request, childId);
  }

  @Test
  void aRunAskedToReportItsEndTellsItsParentsWorkflowItsResultBeforeItEnds(TestWorkflowEnvironment env, Worker worker) {
    List<NodeEnd> ends = upgradeUnderEndingParent(env, worker, "reports-end");

    assertEquals(1, ends.size());
    assertTrue(ends.get(0).upgraded(), ends.toString());
    assertEquals("worker-1", ends.get(0).node());
    assertEquals("reports-end", ends.get(0).workflowId());
    assertEquals(TO, ends.get(0).result().version());
    List<HistoryEvent> events = env.getWorkflowClient().fetchHistory("reports-end").getEvents();
    assertEquals(EventType.EVENT_TYPE_EXTERNAL_WORKFLOW_EXECUTION_SIGNALED,
        events.get(events.size() - 5).getEventType(), "the report lands before the run completes");
  }

  @Test
  void aRunAskedToReportItsEndTellsItsParentsWorkflowHowItFailed(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.cordonNode(any())).thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.KUBERNETES_API_ERROR, "cordon refused"));

    List<NodeEnd> ends = upgradeUnderEndingParent(env, worker, "reports-failed-end");

    assertEquals(1, ends.size());
    NodeEnd end = ends.get(0);
    assertFalse(end.upgraded());
    assertEquals(UpgradeFailures.KUBERNETES_API_ERROR, end.failureType());
    assertEquals(UpgradeStep.CORDON, end.failure().failedStep());
    assertEquals(end.failureType(), end.failure().reason());
  }

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordReportedEndPath(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(REPORTED_END);
    String childId = id("reported-end");
    assertEquals(1, upgradeUnderEndingParent(env, worker, childId).size());
    record(env, "reported-end", REPORTED_END);
  }

  /** A run that backs up before it cordons (node-upgrade-backs-up-before-cordon), recorded by {@link #recordBackedUpBeforeCordonPath}. */
  static final String BACKED_UP_BEFORE_CORDON = "node-upgrade-path-backed-up-before-cordon.json";

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordBackedUpBeforeCordonPath(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(BACKED_UP_BEFORE_CORDON);
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    NodeUpgradeWorkflow run = stub(env, worker, "backed-up-before-cordon");
    assertEquals(TO, run.upgrade(request).version());
    record(env, "backed-up-before-cordon", BACKED_UP_BEFORE_CORDON);
  }

  /**
   * Runs that read preflight's three facts at once (node-upgrade-preflight-reads-at-once): one
   * upgraded, one whose host could not be read; recorded by {@link #recordPreflightReadsAtOncePaths}.
   */
  static final String READS_AT_ONCE = "node-upgrade-path-preflight-reads-at-once.json";
  static final String READS_AT_ONCE_HOST_FAILED = "node-upgrade-path-preflight-reads-at-once-host-failed.json";

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPreflightReadsAtOncePaths(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(READS_AT_ONCE, READS_AT_ONCE_HOST_FAILED);
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    assertEquals(TO, stub(env, worker, "preflight-reads-at-once").upgrade(request).version());
    record(env, "preflight-reads-at-once", READS_AT_ONCE);

    when(hosts.inspectHost(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.HOST_UNREACHABLE, "connection refused"));
    NodeUpgradeWorkflow failing = stub(env, worker, "preflight-reads-at-once-host-failed");
    assertThrows(WorkflowFailedException.class, () -> failing.upgrade(request));
    record(env, "preflight-reads-at-once-host-failed", READS_AT_ONCE_HOST_FAILED);
  }

  /**
   * Runs whose host the management cluster confirms first (node-upgrade-confirms-host-access): one
   * confirmed and upgraded, one refused before anything else; recorded by {@link #recordHostAccessPaths}.
   */
  static final String HOST_CONFIRMED = "node-upgrade-path-host-access-confirmed.json";
  static final String HOST_REFUSED = "node-upgrade-path-host-access-refused.json";

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordHostAccessPaths(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(HOST_CONFIRMED, HOST_REFUSED);
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    assertEquals(TO, stub(env, worker, "host-access-confirmed").upgrade(request).version());
    record(env, "host-access-confirmed", HOST_CONFIRMED);

    org.mockito.Mockito.clearInvocations(hosts, nodes);
    org.mockito.Mockito.doThrow(UpgradeFailures.nonRetryable(UpgradeFailures.HOST_ACCESS_MISMATCH,
            "address 10.9.9.9 is not one of Machine fleet/worker-1's addresses [10.0.0.11]"))
        .when(capi).confirmHostAccess(any());
    NodeUpgradeWorkflow refused = stub(env, worker, "host-access-refused");
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> refused.upgrade(request));
    assertTrue(e.getCause().getMessage().contains("refusing the run's host: address 10.9.9.9"), e.getCause().getMessage());
    org.mockito.Mockito.verifyNoInteractions(hosts, nodes);
    record(env, "host-access-refused", HOST_REFUSED);
  }

  private static NodeUpgradeWorkflow prepared(
      TestWorkflowEnvironment env, Worker worker, String suffix, NodeUpgradeRequest waiting) {
    NodeUpgradeWorkflow run = stub(env, worker, suffix);
    WorkflowClient.start(run::upgrade, waiting);
    for (int i = 0; i < 200 && !run.progress().message().startsWith("prepared"); i++) {
      env.sleep(java.time.Duration.ofSeconds(1));
    }
    assertTrue(run.progress().message().startsWith("prepared"), run.progress().message());
    return run;
  }

  private static String id(String suffix) {
    return "node-upgrade-path-" + suffix;
  }

  private static NodeUpgradeWorkflow stub(TestWorkflowEnvironment env, Worker worker, String suffix) {
    return env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(id(suffix)).setTaskQueue(worker.getTaskQueue()).build());
  }

  /** Recorded under the workflow ID the replay uses: the file's name ({@link HistoryFixtures#replay}). */
  private static void record(TestWorkflowEnvironment env, String suffix, String file) throws Exception {
    assertEquals(id(suffix) + ".json", file);
    HistoryFixtures.record(env, id(suffix), null, file);
  }
}
