package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.atLeastOnce;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verifyNoInteractions;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordResult;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.BackupResult;
import dev.inplace.workflows.api.HostActivities.HostFacts;
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
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.Fixtures;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.ValueSource;
import org.mockito.InOrder;

class NodeUpgradeWorkflowTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow =
      TestWorkflowExtension.newBuilder()
          .registerWorkflowImplementationTypes(NodeUpgradeWorkflowImpl.class)
          .registerSearchAttribute("InplaceCluster", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceKind", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceTargetVersion", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceNode", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST)
          .registerSearchAttribute("InplacePhase", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .setDoNotStart(true)
          .build();

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi =
      mock(ClusterApiActivities.class, withSettings().withoutAnnotations());
  private final NodeUpgradeRequest request = Fixtures.request("worker-1", NodeRole.WORKER);
  private final String workflowId = WorkflowIds.nodeUpgrade("fleet", "worker-1-machine", TO);

  @BeforeEach
  void healthyEstate() {
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", FROM));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    when(hosts.stageArtifacts(any())).thenReturn(new StageResult(List.of("k3s", "k3s-airgap-images"), List.of(), 72 << 20));
    when(nodes.cordonNode(any())).thenReturn(new CordonResult(true, false));
    when(nodes.drainNode(any())).thenReturn(new DrainResult(3, 0, 1, 0, 2));
    when(hosts.backupBinaries(any())).thenReturn(new BackupResult(List.of("/usr/local/bin/k3s"), List.of()));
    when(hosts.installArtifacts(any())).thenReturn(new InstallResult(List.of("k3s", "k3s-airgap-images"), List.of()));
    when(hosts.restartService(any())).thenReturn(new ServiceResult("k3s-agent", true));
    when(nodes.awaitNodeVersion(argThat(r -> r != null && TO.equals(r.expectedVersion()))))
        .thenReturn(Fixtures.readyAt("worker-1", TO));
    when(nodes.awaitNodeVersion(argThat(r -> r != null && FROM.equals(r.expectedVersion()))))
        .thenReturn(Fixtures.readyAt("worker-1", FROM));
    when(nodes.uncordonNode(any())).thenReturn(new UncordonResult(true, ""));
    when(hosts.restoreBinaries(any()))
        .thenReturn(new RestoreResult(List.of("/usr/local/bin/k3s"), List.of(Fixtures.images().installPath()), true));
    when(capi.recordMachineUpgrade(any()))
        .thenReturn(new MachineRecordResult(FROM, List.of("Machine fleet/worker-1-machine spec.version " + FROM + " -> " + TO)));
    when(nodes.controlPlaneVersions(any()))
        .thenReturn(new NodeVersions(List.of(new NodeVersion("cp-1", TO), new NodeVersion("cp-2", TO))));
  }

  private NodeUpgradeWorkflow start(TestWorkflowEnvironment env, Worker worker) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    return env.getWorkflowClient()
        .newWorkflowStub(
            NodeUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  // ---- a child prepared ahead waits for its parent's permit before cordon ---------------------

  /** Starts a run that waits for its permit and returns once it waits (preflight and stage done). */
  private NodeUpgradeWorkflow prepared(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeWorkflow workflow = start(env, worker);
    WorkflowClient.start(workflow::upgrade, request.withAwaitPermit(true));
    for (int i = 0; i < 200 && !workflow.progress().message().startsWith("prepared"); i++) {
      env.sleep(java.time.Duration.ofSeconds(1));
    }
    assertTrue(workflow.progress().message().startsWith("prepared"), workflow.progress().message());
    return workflow;
  }

  @Test
  void aPreparedRunWaitsForItsPermitThenLooksAtItsNodeAgainBeforeCordon(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeWorkflow workflow = prepared(env, worker);
    env.sleep(java.time.Duration.ofHours(1));
    verify(hosts).stageArtifacts(any());
    verify(hosts).backupBinaries(any());
    verify(nodes, never()).cordonNode(any());

    workflow.permit();
    NodeUpgradeResult result = WorkflowStub.fromTyped(workflow).getResult(NodeUpgradeResult.class);

    assertEquals(TO, result.version());
    InOrder order = inOrder(nodes, hosts);
    order.verify(nodes).inspectNode(any());
    order.verify(hosts).stageArtifacts(any());
    order.verify(hosts).backupBinaries(any());
    order.verify(nodes).inspectNode(any());
    order.verify(nodes).cordonNode(any());
    order.verify(hosts).installArtifacts(any());
  }

  @Test
  void aPermitThatComesBeforeTheRunWaitsIsKept(TestWorkflowEnvironment env, Worker worker) throws Exception {
    CountDownLatch staging = new CountDownLatch(1);
    CountDownLatch permitted = new CountDownLatch(1);
    when(hosts.stageArtifacts(any())).thenAnswer(inv -> {
      staging.countDown();
      assertTrue(permitted.await(30, TimeUnit.SECONDS));
      return new StageResult(List.of("k3s"), List.of(), 1);
    });
    NodeUpgradeWorkflow workflow = start(env, worker);
    WorkflowClient.start(workflow::upgrade, request.withAwaitPermit(true));
    assertTrue(staging.await(30, TimeUnit.SECONDS));

    workflow.permit();
    permitted.countDown();

    assertEquals(TO, WorkflowStub.fromTyped(workflow).getResult(60, TimeUnit.SECONDS, NodeUpgradeResult.class).version());
  }

  @Test
  void aNodeThatChangedWhileItWaitedIsRefusedWithNothingChanged(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any()))
        .thenReturn(Fixtures.readyAt("worker-1", FROM))
        .thenReturn(new NodeState("worker-1", false, false, FROM, null));
    NodeUpgradeWorkflow workflow = prepared(env, worker);

    workflow.permit();

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> WorkflowStub.fromTyped(workflow).getResult(NodeUpgradeResult.class));
    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(UpgradeFailures.NODE_NOT_READY, failure.getType());
    NodeFailure details = failure.getDetails().get(NodeFailure.class);
    assertEquals(UpgradeStep.PREFLIGHT, details.failedStep());
    assertEquals(NodePhase.FAILED, details.phase());
    assertTrue(details.message().contains("when its turn came"), details.message());
    verify(nodes, never()).cordonNode(any());
    verify(hosts, never()).restoreBinaries(any());
  }

  @Test
  void aNodeRunningAnotherVersionWhenItsTurnComesIsRefused(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any()))
        .thenReturn(Fixtures.readyAt("worker-1", FROM))
        .thenReturn(Fixtures.readyAt("worker-1", "v1.30.9+k3s1"));
    NodeUpgradeWorkflow workflow = prepared(env, worker);

    workflow.permit();

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> WorkflowStub.fromTyped(workflow).getResult(NodeUpgradeResult.class));
    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(UpgradeFailures.PREFLIGHT_FAILED, failure.getType());
    assertTrue(failure.getOriginalMessage().contains("but preflight saw " + FROM), failure.getOriginalMessage());
    verify(nodes, never()).cordonNode(any());
  }

  @Test
  void aRunStoodDownWhileItWaitsChangesNothingOnItsNode(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeWorkflow workflow = prepared(env, worker);
    WorkflowStub stub = WorkflowStub.fromTyped(workflow);

    stub.cancel();

    assertThrows(WorkflowFailedException.class, () -> stub.getResult(NodeUpgradeResult.class));
    var progress = workflow.progress();
    assertEquals(NodePhase.FAILED, progress.phase());
    assertTrue(progress.message().startsWith("stood down before its turn: nothing was changed"), progress.message());
    verify(nodes, never()).cordonNode(any());
    verify(hosts, never()).installArtifacts(any());
    verify(hosts, never()).restoreBinaries(any());
    verify(nodes, never()).uncordonNode(any());
  }

  @ParameterizedTest(name = "prepared ahead: {0}")
  @ValueSource(booleans = {false, true})
  void aBackupFailingBeforeCordonFailsTheRunWithNothingToRollBack(
      boolean preparedAhead, TestWorkflowEnvironment env, Worker worker) {
    when(hosts.backupBinaries(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.REMOTE_COMMAND_FAILED, "backup dir read-only"));
    NodeUpgradeWorkflow workflow = start(env, worker);

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> workflow.upgrade(request.withAwaitPermit(preparedAhead)));

    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class, e.getCause());
    NodeFailure details = failure.getDetails().get(NodeFailure.class);
    assertEquals(UpgradeStep.BACKUP, details.failedStep());
    assertEquals(NodePhase.FAILED, details.phase());
    verify(nodes, never()).cordonNode(any());
    verify(hosts, never()).restoreBinaries(any());
    verify(nodes, never()).uncordonNode(any());
  }

  // ---- preflight's reads at once (node-upgrade-preflight-reads-at-once) --------------------------

  /** Waits (on an activity's thread) until the latch opens; a read that came one after the other never sees it open. */
  private static void awaitTogether(CountDownLatch others, String what) {
    try {
      if (!others.await(20, TimeUnit.SECONDS)) {
        throw UpgradeFailures.nonRetryable(UpgradeFailures.PREFLIGHT_FAILED, what + " ran alone");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException(e);
    }
  }

  @Test
  void preflightReadsTheNodeTheHostAndTheControlPlaneAtOnce(TestWorkflowEnvironment env, Worker worker) {
    CountDownLatch othersStarted = new CountDownLatch(2);
    when(hosts.inspectHost(any())).thenAnswer(i -> {
      othersStarted.countDown();
      return Fixtures.hostWithOldRelease();
    });
    when(nodes.controlPlaneVersions(any())).thenAnswer(i -> {
      othersStarted.countDown();
      return new NodeVersions(List.of(new NodeVersion("cp-1", TO)));
    });
    when(nodes.inspectNode(any())).thenAnswer(i -> {
      awaitTogether(othersStarted, "the Node's read");
      return Fixtures.readyAt("worker-1", FROM);
    });

    NodeUpgradeResult result = start(env, worker).upgrade(request);

    assertEquals(TO, result.version());
  }

  @Test
  void aFailedReadIsReportedWithoutWaitingForTheReadsAfterIt(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.NODE_NOT_FOUND, "node worker-1 not found"));
    CountDownLatch release = new CountDownLatch(1);
    when(hosts.inspectHost(any())).thenAnswer(i -> {
      release.await(20, TimeUnit.SECONDS); // an unreachable host, still being tried
      return Fixtures.hostWithOldRelease();
    });
    try {
      WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request));

      assertEquals(UpgradeStep.PREFLIGHT, nodeFailure(e, UpgradeFailures.NODE_NOT_FOUND).failedStep());
      List<io.temporal.api.history.v1.HistoryEvent> events =
          env.getWorkflowClient().fetchHistory(workflowId).getEvents();
      long hostRead = events.stream()
          .filter(event -> event.hasActivityTaskScheduledEventAttributes()
              && "InspectHost".equals(event.getActivityTaskScheduledEventAttributes().getActivityType().getName()))
          .findFirst().orElseThrow().getEventId();
      List<Long> hostReadEnded = events.stream()
          .filter(event -> (event.hasActivityTaskCompletedEventAttributes()
                  && event.getActivityTaskCompletedEventAttributes().getScheduledEventId() == hostRead)
              || (event.hasActivityTaskFailedEventAttributes()
                  && event.getActivityTaskFailedEventAttributes().getScheduledEventId() == hostRead)
              || (event.hasActivityTaskTimedOutEventAttributes()
                  && event.getActivityTaskTimedOutEventAttributes().getScheduledEventId() == hostRead))
          .map(io.temporal.api.history.v1.HistoryEvent::getEventId)
          .toList();
      assertEquals(List.of(), hostReadEnded, "the run failed only once the host's read had ended");
      verify(nodes, never()).cordonNode(any());
    } finally {
      release.countDown();
    }
  }

  @Test
  void aRunNotAskedToWaitNeverLooksForAPermit(TestWorkflowEnvironment env, Worker worker) {
    start(env, worker).upgrade(request);

    verify(nodes).inspectNode(any());
    verify(nodes).cordonNode(any());
  }

  // ---- the runtime-extension path: the run marks its own Machine ------------------------------

  @Test
  void aRunAskedToMarkItsMachineMarksItFirstAndRemovesOnlyItsOwnMarkLast(TestWorkflowEnvironment env, Worker worker) {
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));

    start(env, worker).upgrade(request.withMarkMachine(true));

    InOrder order = inOrder(nodes, hosts, capi);
    order.verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "worker-1-machine", true, workflowId));
    order.verify(nodes).inspectNode(any());
    order.verify(nodes).cordonNode(any());
    order.verify(capi).recordMachineUpgrade(any());
    order.verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "worker-1-machine", false, workflowId));
  }

  @Test
  void aRolledBackRunStillRemovesItsMark(TestWorkflowEnvironment env, Worker worker) {
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    failAt(UpgradeStep.VERIFY);

    assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request.withMarkMachine(true)));

    InOrder order = inOrder(hosts, capi);
    order.verify(hosts).restoreBinaries(any());
    order.verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "worker-1-machine", false, workflowId));
  }

  @Test
  void aChildOfAParentRunLeavesTheMarkToItsParent(TestWorkflowEnvironment env, Worker worker) {
    start(env, worker).upgrade(request);

    verify(capi, never()).markMachineUpgrading(any());
  }

  @Test
  @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordOwnMarkHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    dev.inplace.workflows.testing.HistoryFixtures.assumeNotRecorded("node-upgrade-upgraded-own-machine-mark.json");
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    start(env, worker).upgrade(request.withMarkMachine(true));
    writeHistory(env, workflowId, "node-upgrade-upgraded-own-machine-mark.json");
  }

  // ---- the Temporal UI -------------------------------------------------------------------------

  @Test
  void everyActivityCallCarriesASummaryAndTheRunKeepsItsCurrentDetails(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeWorkflow workflow = start(env, worker);
    workflow.upgrade(request);

    List<io.temporal.api.history.v1.HistoryEvent> scheduled = env.getWorkflowClient().fetchHistory(workflowId)
        .getEvents().stream()
        .filter(io.temporal.api.history.v1.HistoryEvent::hasActivityTaskScheduledEventAttributes)
        .toList();
    List<String> summaries = scheduled.stream()
        .map(e -> io.temporal.common.converter.DefaultDataConverter.STANDARD_INSTANCE.fromPayload(
            e.getUserMetadata().getSummary(), String.class, String.class))
        .toList();
    assertEquals(scheduled.size(), summaries.stream().filter(t -> t != null && !t.isBlank()).count(),
        "every activity call has a summary: " + summaries);
    assertTrue(summaries.stream().anyMatch(t -> t.matches("stage k3s \\d+ MiB, k3s-airgap-images \\d+ MiB -> worker-1")),
        summaries.toString());
    assertTrue(summaries.contains("drain worker-1 (up to " + request.drain().timeoutSeconds() + " s)"), summaries.toString());
    assertTrue(summaries.contains("wait for worker-1 Ready at " + TO), summaries.toString());
    assertTrue(summaries.contains("record " + TO + " on Machine worker-1-machine"), summaries.toString());

    io.temporal.api.sdk.v1.WorkflowMetadata metadata = WorkflowStub.fromTyped(workflow)
        .query("__temporal_workflow_metadata", io.temporal.api.sdk.v1.WorkflowMetadata.class);
    assertEquals("node worker-1 (Machine worker-1-machine); UPGRADED; step record; upgraded " + FROM + " -> " + TO,
        metadata.getCurrentDetails());
  }

  @Test
  @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordUiSummariesHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    dev.inplace.workflows.testing.HistoryFixtures.assumeNotRecorded("node-upgrade-upgraded-ui-summaries.json");
    start(env, worker).upgrade(request);
    writeHistory(env, workflowId, "node-upgrade-upgraded-ui-summaries.json");
  }

  @Test
  void upgradesANodeThroughEveryStepInOrder(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeResult result = start(env, worker).upgrade(request);

    // Preflight's reads run at once (either may come first), both before the stage step.
    InOrder host = inOrder(hosts);
    host.verify(hosts).inspectHost(any());
    host.verify(hosts).stageArtifacts(any());
    InOrder order = inOrder(nodes, hosts, capi);
    order.verify(nodes).inspectNode(any());
    order.verify(hosts).stageArtifacts(any());
    order.verify(hosts).backupBinaries(argThat(r -> r.current().size() == 2));
    order.verify(nodes).cordonNode(argThat(r -> workflowId.equals(r.owner())));
    order.verify(nodes).drainNode(any());
    order.verify(hosts).installArtifacts(any());
    order.verify(hosts).restartService(argThat(r -> "k3s-agent".equals(r.service())));
    order.verify(nodes).awaitNodeVersion(argThat(r -> TO.equals(r.expectedVersion())));
    order.verify(nodes).uncordonNode(argThat(r -> workflowId.equals(r.owner())));
    order.verify(capi).recordMachineUpgrade(argThat(r -> TO.equals(r.version()) && "worker-1-machine".equals(r.machineName())
        && r.distribution() == dev.inplace.workflows.api.Distribution.K3S && r.role() == NodeRole.WORKER));
    verify(hosts, never()).restoreBinaries(any());
    verify(hosts, never()).runUpgradeCommand(any());

    assertEquals(FROM, result.previousVersion());
    assertEquals(TO, result.version());
    assertFalse(result.alreadyAtTarget());
    assertEquals(
        List.of(UpgradeStep.PREFLIGHT, UpgradeStep.STAGE, UpgradeStep.BACKUP, UpgradeStep.CORDON,
            UpgradeStep.DRAIN, UpgradeStep.INSTALL, UpgradeStep.RESTART, UpgradeStep.VERIFY,
            UpgradeStep.UNCORDON, UpgradeStep.RECORD),
        result.steps().stream().map(s -> s.step()).toList());
    assertTrue(result.steps().stream().allMatch(s -> s.status() == StepStatus.DONE));
  }

  @Test
  void aRunIsFindableByClusterNodeAndPhase(TestWorkflowEnvironment env, Worker worker) {
    start(env, worker).upgrade(request);

    var attributes =
        env.getWorkflowClient().fetchHistory(workflowId).getEvents().stream()
            .filter(e -> e.hasUpsertWorkflowSearchAttributesEventAttributes())
            .map(e -> e.getUpsertWorkflowSearchAttributesEventAttributes().getSearchAttributes().getIndexedFieldsMap())
            .flatMap(m -> m.keySet().stream().map(k -> k + "=" + m.get(k).getData().toStringUtf8()))
            .toList();
    assertTrue(attributes.contains("InplaceCluster=\"fleet/edge-1\""), attributes.toString());
    assertTrue(attributes.contains("InplaceNode=[\"worker-1\"]"), attributes.toString());
    assertTrue(attributes.contains("InplacePhase=\"UPGRADED\""), attributes.toString());
  }

  @ParameterizedTest
  @EnumSource(
      value = UpgradeStep.class,
      names = {"CORDON", "DRAIN", "INSTALL", "RESTART", "VERIFY"})
  void failureAtAStepRollsBackInReverseOrder(UpgradeStep failing, TestWorkflowEnvironment env, Worker worker) {
    String type = failAt(failing);

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request));

    NodeFailure failure = nodeFailure(e, type);
    assertEquals(failing, failure.failedStep());
    assertEquals(NodePhase.ROLLED_BACK, failure.phase());
    assertEquals(FROM, failure.versionNow());
    InOrder order = inOrder(hosts, nodes);
    boolean hostChanged = failing.compareTo(UpgradeStep.INSTALL) >= 0;
    if (failing.compareTo(UpgradeStep.INSTALL) >= 0) {
      order.verify(hosts).restoreBinaries(argThat(r -> r.previous().size() == 2));
    }
    if (hostChanged) {
      order.verify(hosts, atLeastOnce()).restartService(any());
      order.verify(nodes).awaitNodeVersion(argThat(r -> FROM.equals(r.expectedVersion())));
    }
    order.verify(nodes).uncordonNode(argThat(r -> workflowId.equals(r.owner())));
    verify(capi, never()).recordMachineUpgrade(any());
    assertEquals(StepStatus.FAILED, failure.steps().stream().filter(s -> s.step() == failing).findFirst().orElseThrow().status());
  }

  @Test
  void stagingFailureChangesNothingAndRunsNoCompensation(TestWorkflowEnvironment env, Worker worker) {
    when(hosts.stageArtifacts(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ARTIFACT_DIGEST_MISMATCH, "digest of k3s differs"));

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request));

    NodeFailure failure = nodeFailure(e, UpgradeFailures.ARTIFACT_DIGEST_MISMATCH);
    assertEquals(NodePhase.FAILED, failure.phase());
    verify(nodes, never()).cordonNode(any());
    verify(nodes, never()).uncordonNode(any());
    verify(hosts, never()).restoreBinaries(any());
  }

  @Test
  void failedRestoreLeavesTheNodeCordonedAndSaysSo(TestWorkflowEnvironment env, Worker worker) {
    failAt(UpgradeStep.RESTART);
    when(hosts.restoreBinaries(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ROLLBACK_FAILED, "backup k3s.prev missing"));

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request));

    NodeFailure failure = nodeFailure(e, UpgradeFailures.ROLLBACK_FAILED);
    assertEquals(NodePhase.ROLLBACK_FAILED, failure.phase());
    assertTrue(failure.message().contains("left cordoned"), failure.message());
    verify(nodes, never()).uncordonNode(any());
  }

  @Test
  void refusesADowngradeBeforeChangingAnything(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", "v1.31.5+k3s1"));
    assertRefused(env, worker, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "downgrade");
  }

  @Test
  void refusesToSkipAMinorVersion(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", "v1.29.9+k3s1"));
    assertRefused(env, worker, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "skip minor");
  }

  @Test
  void refusesAWorkerWhoseKubeletWouldBeNewerThanTheControlPlane(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.controlPlaneVersions(any()))
        .thenReturn(new NodeVersions(List.of(new NodeVersion("cp-1", TO), new NodeVersion("cp-2", FROM))));
    assertRefused(env, worker, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "cp-2 runs " + FROM);
  }

  @Test
  void aControlPlaneNodeIsNotComparedWithTheControlPlane(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeRequest cp = Fixtures.request("cp-1", NodeRole.CONTROL_PLANE);
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("cp-1", FROM));
    when(nodes.awaitNodeVersion(any())).thenReturn(Fixtures.readyAt("cp-1", TO));

    start(env, worker).upgrade(cp);

    verify(nodes, never()).controlPlaneVersions(any());
  }

  @Test
  void refusesANodeThatIsNotReady(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", false, false, FROM, null));
    assertRefused(env, worker, UpgradeFailures.NODE_NOT_READY, "not Ready");
  }

  @Test
  void refusesAHostWithTooLittleDisk(TestWorkflowEnvironment env, Worker worker) {
    HostFacts full = Fixtures.hostWithOldRelease();
    when(hosts.inspectHost(any()))
        .thenReturn(new HostFacts(full.arch(), 1 << 20, full.installed(), full.installedVersion(), true));
    assertRefused(env, worker, UpgradeFailures.INSUFFICIENT_DISK, "bytes free");
  }

  @Test
  void refusesAHostOfAnotherArchitecture(TestWorkflowEnvironment env, Worker worker) {
    HostFacts arm = Fixtures.hostWithOldRelease();
    when(hosts.inspectHost(any()))
        .thenReturn(new HostFacts("arm64", arm.stagingFreeBytes(), arm.installed(), arm.installedVersion(), true));
    assertRefused(env, worker, UpgradeFailures.ARCHITECTURE_MISMATCH, "arm64");
  }

  @Test
  void refusesWhenTheHostCannotBeReached(TestWorkflowEnvironment env, Worker worker) {
    when(hosts.inspectHost(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.HOST_KEY_MISMATCH, "host key of 127.0.0.11 does not match"));
    assertRefused(env, worker, UpgradeFailures.HOST_KEY_MISMATCH, "host key");
  }

  @Test
  void aNodeAlreadyAtTheTargetIsOnlyRecorded(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", TO));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithNewRelease());

    NodeUpgradeResult result = start(env, worker).upgrade(request);

    assertTrue(result.alreadyAtTarget());
    verify(hosts, never()).stageArtifacts(any());
    verify(nodes, never()).cordonNode(any());
    verify(hosts, never()).restartService(any());
    verify(nodes, never()).uncordonNode(any());
    verify(capi).recordMachineUpgrade(any());
  }

  @Test
  void aRerunAfterACrashBeforeUncordonReleasesItsOwnCordon(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", true, true, TO, workflowId));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithNewRelease());

    NodeUpgradeResult result = start(env, worker).upgrade(request);

    assertTrue(result.alreadyAtTarget());
    verify(nodes).uncordonNode(argThat(r -> workflowId.equals(r.owner())));
  }

  @Test
  void aNodeCordonedByTheOperatorStaysCordonedAfterTheUpgrade(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.cordonNode(any())).thenReturn(new CordonResult(false, true));

    NodeUpgradeResult result = start(env, worker).upgrade(request);

    verify(nodes, never()).uncordonNode(any());
    assertTrue(result.steps().stream().anyMatch(s -> s.step() == UpgradeStep.UNCORDON && s.message().contains("left cordoned")));
  }

  @Test
  void cancellingDuringDrainStillUncordonsTheNode(TestWorkflowEnvironment env, Worker worker) throws Exception {
    CountDownLatch draining = new CountDownLatch(1);
    when(nodes.drainNode(any()))
        .thenAnswer(
            inv -> {
              draining.countDown();
              // A drain waiting on pods: heartbeats so it learns of the cancellation.
              var ctx = io.temporal.activity.Activity.getExecutionContext();
              while (true) {
                ctx.heartbeat(null);
                Thread.sleep(50);
              }
            });
    NodeUpgradeWorkflow workflow = start(env, worker);
    WorkflowClient.start(workflow::upgrade, request);
    assertTrue(draining.await(30, TimeUnit.SECONDS));

    WorkflowStub stub = WorkflowStub.fromTyped(workflow);
    stub.cancel();

    WorkflowFailedException e =
        assertThrows(WorkflowFailedException.class, () -> stub.getResult(60, TimeUnit.SECONDS, NodeUpgradeResult.class));
    assertInstanceOf(CanceledFailure.class, e.getCause());
    verify(nodes).uncordonNode(argThat(r -> workflowId.equals(r.owner())));
    var progress = workflow.progress();
    assertEquals(NodePhase.ROLLED_BACK, progress.phase());
    assertTrue(progress.message().contains("cancelled"), progress.message());
    verify(hosts, never()).installArtifacts(any());
  }

  @Test
  void progressQueryReportsTheCurrentStep(TestWorkflowEnvironment env, Worker worker) throws Exception {
    CountDownLatch installing = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    when(hosts.installArtifacts(any()))
        .thenAnswer(
            inv -> {
              installing.countDown();
              release.await(30, TimeUnit.SECONDS);
              return new InstallResult(List.of("k3s"), List.of());
            });
    NodeUpgradeWorkflow workflow = start(env, worker);
    WorkflowClient.start(workflow::upgrade, request);
    assertTrue(installing.await(30, TimeUnit.SECONDS));

    var progress = workflow.progress();
    release.countDown();

    assertEquals(NodePhase.UPGRADING, progress.phase());
    assertEquals(UpgradeStep.INSTALL, progress.currentStep());
    assertEquals("worker-1", progress.nodeName());
    WorkflowStub.fromTyped(workflow).getResult(30, TimeUnit.SECONDS, NodeUpgradeResult.class);
  }

  /**
   * Regenerates the committed replay histories (run with {@code -Dhistories.update=true}) from the
   * happy path and from a rollback; {@link NodeUpgradeReplayTest} replays them on every build.
   * Histories of earlier versions of the workflow stay committed beside them.
   */
  @Test
  @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordReplayHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    dev.inplace.workflows.testing.HistoryFixtures.assumeNotRecorded("node-upgrade-upgraded-distribution-steps.json", "node-upgrade-rolled-back-distribution-steps.json");
    NodeUpgradeWorkflow workflow = start(env, worker);
    workflow.upgrade(request);
    writeHistory(env, workflowId, "node-upgrade-upgraded-distribution-steps.json");

    failAt(UpgradeStep.VERIFY);
    String rolledBackId = workflowId + "-rollback";
    NodeUpgradeWorkflow second =
        env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(rolledBackId).setTaskQueue(worker.getTaskQueue()).build());
    assertThrows(WorkflowFailedException.class, () -> second.upgrade(request));
    writeHistory(env, rolledBackId, "node-upgrade-rolled-back-distribution-steps.json");
  }

  static void writeHistory(TestWorkflowEnvironment env, String id, String file) throws Exception {
    dev.inplace.workflows.testing.HistoryFixtures.record(env, id, null, file);
  }

  /** Records the histories of change node-upgrade-catalogue-rules: a run that passes and one refused. */
  @Test
  @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordCatalogueRulesHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    dev.inplace.workflows.testing.HistoryFixtures.assumeNotRecorded(
        "node-upgrade-upgraded-catalogue-rules.json", "node-upgrade-refused-catalogue-rules.json");
    start(env, worker).upgrade(request);
    writeHistory(env, workflowId, "node-upgrade-upgraded-catalogue-rules.json");
    String refusedId = workflowId + "-refused";
    NodeUpgradeWorkflow refused = env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(refusedId).setTaskQueue(worker.getTaskQueue()).build());
    Artifact hostile = new Artifact("k3s", ArtifactKind.BINARY, "https://releases.example/k3s", "ab".repeat(32), 1024,
        "/root/.ssh/authorized_keys", "0600");
    assertThrows(WorkflowFailedException.class, () -> refused.upgrade(withArtifacts(List.of(hostile))));
    writeHistory(env, refusedId, "node-upgrade-refused-catalogue-rules.json");
  }

  @Test
  void aRunStartedByHandWithAHostileInstallPathFailsBeforeAnyActivity(TestWorkflowEnvironment env, Worker worker) {
    Artifact hostile = new Artifact("k3s", ArtifactKind.BINARY, "https://releases.example/k3s", "ab".repeat(32), 1024,
        "/root/.ssh/authorized_keys", "0600");
    assertRefusedUntouched(env, worker, withArtifacts(List.of(hostile)),
        "install path /root/.ssh/authorized_keys is outside the distribution's layout");
  }

  @Test
  void aRunStartedByHandWithAPlainHttpSourceFailsBeforeAnyActivity(TestWorkflowEnvironment env, Worker worker) {
    Artifact plain = new Artifact("k3s", ArtifactKind.BINARY, "http://releases.example/k3s", "ab".repeat(32), 1024,
        "/usr/local/bin/k3s", "0755");
    assertRefusedUntouched(env, worker, withArtifacts(List.of(plain)), "source scheme http is not allowed");
  }

  private NodeUpgradeRequest withArtifacts(List<Artifact> artifacts) {
    return new NodeUpgradeRequest(request.node(), request.distribution(), request.targetVersion(), artifacts,
        request.profile(), request.ssh(), request.drain(), request.readyTimeoutSeconds(), request.minFreeBytes(),
        request.arch());
  }

  private void assertRefusedUntouched(TestWorkflowEnvironment env, Worker worker, NodeUpgradeRequest hostile,
      String text) {
    WorkflowFailedException e =
        assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(hostile));
    NodeFailure failure = nodeFailure(e, UpgradeFailures.INVALID_REQUEST);
    assertEquals(UpgradeStep.PREFLIGHT, failure.failedStep());
    assertTrue(failure.message().contains(text), failure.message());
    verifyNoInteractions(hosts, nodes, capi);
  }

  private void assertRefused(TestWorkflowEnvironment env, Worker worker, String type, String text) {
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request));
    NodeFailure failure = nodeFailure(e, type);
    assertEquals(UpgradeStep.PREFLIGHT, failure.failedStep());
    assertEquals(NodePhase.FAILED, failure.phase());
    assertTrue(failure.message().contains(text), failure.message());
    verify(hosts, never()).stageArtifacts(any());
    verify(nodes, never()).cordonNode(any());
    verify(nodes, never()).uncordonNode(any());
    verify(capi, never()).recordMachineUpgrade(any());
  }

  /** Makes the activity behind {@code step} fail with its vocabulary type; returns that type. */
  private String failAt(UpgradeStep step) {
    String type =
        switch (step) {
          case CORDON -> UpgradeFailures.KUBERNETES_API_ERROR;
          case DRAIN -> UpgradeFailures.DRAIN_BLOCKED;
          case BACKUP -> UpgradeFailures.BACKUP_FAILED;
          case INSTALL -> UpgradeFailures.INSTALL_FAILED;
          case RESTART -> UpgradeFailures.SERVICE_RESTART_FAILED;
          case VERIFY -> UpgradeFailures.VERIFY_TIMEOUT;
          default -> throw new IllegalArgumentException(step.name());
        };
    ApplicationFailure failure = UpgradeFailures.nonRetryable(type, "injected at " + step.cliName());
    switch (step) {
      case CORDON -> when(nodes.cordonNode(any())).thenThrow(failure);
      case DRAIN -> when(nodes.drainNode(any())).thenThrow(failure);
      case BACKUP -> when(hosts.backupBinaries(any())).thenThrow(failure);
      case INSTALL -> when(hosts.installArtifacts(any())).thenThrow(failure);
      case RESTART ->
          when(hosts.restartService(any()))
              .thenThrow(failure)
              .thenReturn(new ServiceResult("k3s-agent", true));
      case VERIFY ->
          when(nodes.awaitNodeVersion(argThat((AwaitNodeRequest r) -> r != null && TO.equals(r.expectedVersion()))))
              .thenThrow(failure);
      default -> throw new IllegalArgumentException(step.name());
    }
    return type;
  }

  private static NodeFailure nodeFailure(WorkflowFailedException e, String expectedType) {
    ApplicationFailure cause = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(expectedType, cause.getType(), cause.getOriginalMessage());
    return cause.getDetails().get(NodeFailure.class);
  }

}
