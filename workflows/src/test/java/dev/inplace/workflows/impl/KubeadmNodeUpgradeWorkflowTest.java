package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.KUBEADM_FROM;
import static dev.inplace.workflows.testing.Fixtures.KUBEADM_TO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordResult;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.BackupResult;
import dev.inplace.workflows.api.HostActivities.InstallResult;
import dev.inplace.workflows.api.HostActivities.RestoreResult;
import dev.inplace.workflows.api.HostActivities.ServiceResult;
import dev.inplace.workflows.api.HostActivities.StageResult;
import dev.inplace.workflows.api.HostActivities.UpgradeCommandResult;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.AwaitNodeRequest;
import dev.inplace.workflows.api.NodeActivities.CordonResult;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.NodeVersion;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeActivities.UncordonResult;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.Fixtures;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributeKey;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.mockito.InOrder;

/**
 * NodeUpgrade on kubeadm nodes: the upgrade command between install and restart ({@code kubeadm
 * upgrade apply} on the first control plane, {@code upgrade node} elsewhere), kubelet as the
 * service, the kubeadm bookkeeping, and what a rollback after the upgrade command reports.
 */
class KubeadmNodeUpgradeWorkflowTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = extension();

  private static TestWorkflowExtension extension() {
    TestWorkflowExtension.Builder builder =
        TestWorkflowExtension.newBuilder()
            .registerWorkflowImplementationTypes(NodeUpgradeWorkflowImpl.class)
            .setDoNotStart(true);
    for (SearchAttributeKey<?> key : RunSearchAttributes.ALL) {
      builder.registerSearchAttribute(key.getName(), key.getValueType());
    }
    return builder.build();
  }

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = mock(ClusterApiActivities.class, withSettings().withoutAnnotations());
  private String node = "worker-1";

  @BeforeEach
  void kubeadmEstate() {
    when(nodes.inspectNode(any())).thenAnswer(inv -> Fixtures.readyAt(node, KUBEADM_FROM));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldKubeadmRelease());
    when(nodes.controlPlaneVersions(any()))
        .thenReturn(new NodeVersions(List.of(new NodeVersion("cp-1", KUBEADM_TO))));
    when(hosts.stageArtifacts(any())).thenReturn(new StageResult(List.of("kubeadm", "kubelet"), List.of(), 100 << 20));
    when(nodes.cordonNode(any())).thenReturn(new CordonResult(true, false));
    when(nodes.drainNode(any())).thenReturn(new DrainResult(1, 0, 1, 0, 1));
    when(hosts.backupBinaries(any()))
        .thenReturn(new BackupResult(List.of("/usr/bin/kubeadm", "/usr/bin/kubelet", "/usr/bin/kubectl"), List.of()));
    when(hosts.installArtifacts(any()))
        .thenReturn(new InstallResult(List.of("kubeadm", "kubelet", "kubectl", "kubernetes-images"), List.of()));
    when(hosts.runUpgradeCommand(any()))
        .thenAnswer(inv -> {
          HostActivities.UpgradeCommandRequest r = inv.getArgument(0);
          return new UpgradeCommandResult(
              r.firstControlPlane() ? "kubeadm upgrade apply " + KUBEADM_TO : "kubeadm upgrade node", false, "");
        });
    when(hosts.restartService(any())).thenReturn(new ServiceResult("kubelet", true));
    when(nodes.awaitNodeVersion(any()))
        .thenAnswer(inv -> Fixtures.readyAt(node, ((AwaitNodeRequest) inv.getArgument(0)).expectedVersion()));
    when(nodes.uncordonNode(any())).thenReturn(new UncordonResult(true, ""));
    when(hosts.restoreBinaries(any()))
        .thenReturn(new RestoreResult(List.of("/usr/bin/kubeadm", "/usr/bin/kubelet", "/usr/bin/kubectl"), List.of(), true));
    when(capi.recordMachineUpgrade(any())).thenReturn(new MachineRecordResult(KUBEADM_FROM, List.of("patched")));
  }

  private NodeUpgradeWorkflow start(TestWorkflowEnvironment env, Worker worker, String id) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    return stub(env, worker, id);
  }

  private static NodeUpgradeWorkflow stub(TestWorkflowEnvironment env, Worker worker, String id) {
    return env.getWorkflowClient()
        .newWorkflowStub(
            NodeUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(worker.getTaskQueue()).build());
  }

  private NodeUpgradeRequest request(String name, NodeRole role, boolean first) {
    node = name;
    return Fixtures.kubeadmRequest(name, role, first);
  }

  private static String id(String name) {
    return WorkflowIds.nodeUpgrade("fleet", name + "-machine", KUBEADM_TO);
  }

  @Test
  void firstControlPlaneRunsUpgradeApplyAfterInstallThenRestartsTheKubelet(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeResult result = start(env, worker, id("cp-1")).upgrade(request("cp-1", NodeRole.CONTROL_PLANE, true));

    InOrder order = inOrder(hosts, nodes, capi);
    order.verify(hosts).inspectHost(argThat(r -> r.distribution() == Distribution.KUBEADM));
    order.verify(hosts).stageArtifacts(argThat(r -> r.distribution() == Distribution.KUBEADM));
    order.verify(hosts).backupBinaries(argThat(r -> r.current().size() == 4 && r.distribution() == Distribution.KUBEADM));
    order.verify(nodes).cordonNode(any());
    order.verify(nodes).drainNode(any());
    order.verify(hosts).installArtifacts(argThat(r -> r.distribution() == Distribution.KUBEADM));
    order.verify(hosts).runUpgradeCommand(argThat(r -> r.firstControlPlane() && r.role() == NodeRole.CONTROL_PLANE
        && KUBEADM_TO.equals(r.targetVersion()) && r.distribution() == Distribution.KUBEADM));
    order.verify(hosts).restartService(argThat(r -> "kubelet".equals(r.service()) && r.distribution() == Distribution.KUBEADM));
    order.verify(nodes).awaitNodeVersion(argThat(r -> KUBEADM_TO.equals(r.expectedVersion())));
    order.verify(nodes).uncordonNode(any());
    order.verify(capi).recordMachineUpgrade(argThat(r -> r.distribution() == Distribution.KUBEADM
        && r.role() == NodeRole.CONTROL_PLANE && KUBEADM_TO.equals(r.version()) && "cp-1-machine".equals(r.machineName())));
    verify(nodes, never()).controlPlaneVersions(any());

    assertEquals(
        List.of(UpgradeStep.PREFLIGHT, UpgradeStep.STAGE, UpgradeStep.BACKUP, UpgradeStep.CORDON, UpgradeStep.DRAIN,
            UpgradeStep.INSTALL, UpgradeStep.UPGRADE, UpgradeStep.RESTART, UpgradeStep.VERIFY, UpgradeStep.UNCORDON,
            UpgradeStep.RECORD),
        result.steps().stream().map(s -> s.step()).toList());
    assertEquals("kubeadm upgrade apply " + KUBEADM_TO, stepMessage(result, UpgradeStep.UPGRADE));
  }

  @Test
  void anotherControlPlaneRunsUpgradeNode(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeResult result = start(env, worker, id("cp-2")).upgrade(request("cp-2", NodeRole.CONTROL_PLANE, false));

    verify(hosts).runUpgradeCommand(argThat(r -> !r.firstControlPlane() && r.role() == NodeRole.CONTROL_PLANE));
    assertEquals("kubeadm upgrade node", stepMessage(result, UpgradeStep.UPGRADE));
  }

  @Test
  void aWorkerChecksTheControlPlaneThenRunsUpgradeNodeBeforeTheKubeletRestart(TestWorkflowEnvironment env, Worker worker) {
    NodeUpgradeResult result = start(env, worker, id("worker-1")).upgrade(request("worker-1", NodeRole.WORKER, false));

    InOrder order = inOrder(hosts, nodes);
    order.verify(nodes).controlPlaneVersions(any());
    order.verify(hosts).installArtifacts(any());
    order.verify(hosts).runUpgradeCommand(argThat(r -> !r.firstControlPlane() && r.role() == NodeRole.WORKER));
    order.verify(hosts).restartService(argThat(r -> "kubelet".equals(r.service())));
    assertEquals(NodeRole.WORKER, Fixtures.kubeadmRequest("w", NodeRole.WORKER, false).node().role());
    assertTrue(result.steps().stream().allMatch(s -> s.status() == StepStatus.DONE));
  }

  @Test
  void aWorkerNewerThanAControlPlaneIsRefusedBeforeAnyChange(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.controlPlaneVersions(any()))
        .thenReturn(new NodeVersions(List.of(new NodeVersion("cp-1", KUBEADM_TO), new NodeVersion("cp-2", KUBEADM_FROM))));

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> start(env, worker, id("worker-1")).upgrade(request("worker-1", NodeRole.WORKER, false)));

    NodeFailure failure = nodeFailure(e, UpgradeFailures.UNSUPPORTED_VERSION_SKEW);
    assertEquals(UpgradeStep.PREFLIGHT, failure.failedStep());
    assertEquals(NodePhase.FAILED, failure.phase());
    assertTrue(failure.message().contains("newer than the control plane"), failure.message());
    verify(hosts, never()).stageArtifacts(any());
    verify(nodes, never()).cordonNode(any());
  }

  @ParameterizedTest
  @EnumSource(value = UpgradeStep.class, names = {"INSTALL", "UPGRADE", "RESTART", "VERIFY"})
  void aFailureAtAKubeadmStepRestoresTheBinariesRestartsTheKubeletAndUncordons(
      UpgradeStep failing, TestWorkflowEnvironment env, Worker worker) {
    String type = failAt(failing);

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> start(env, worker, id("cp-1")).upgrade(request("cp-1", NodeRole.CONTROL_PLANE, true)));

    NodeFailure failure = nodeFailure(e, type);
    assertEquals(failing, failure.failedStep());
    assertEquals(NodePhase.ROLLED_BACK, failure.phase());
    assertEquals(KUBEADM_FROM, failure.versionNow());
    InOrder order = inOrder(hosts, nodes);
    order.verify(hosts).restoreBinaries(argThat(r -> r.previous().size() == 4 && r.distribution() == Distribution.KUBEADM));
    order.verify(hosts).restartService(argThat(r -> "kubelet".equals(r.service()) && r.distribution() == Distribution.KUBEADM));
    order.verify(nodes).awaitNodeVersion(argThat(r -> KUBEADM_FROM.equals(r.expectedVersion())));
    order.verify(nodes).uncordonNode(any());
    verify(capi, never()).recordMachineUpgrade(any());
    boolean upgradeRan = failing.compareTo(UpgradeStep.UPGRADE) >= 0;
    assertEquals(upgradeRan, failure.message().contains("kubeadm-backup-manifests"), failure.message());
    if (upgradeRan) {
      assertTrue(failure.message().contains("kubeadm upgrade apply had started"), failure.message());
    } else {
      verify(hosts, never()).runUpgradeCommand(any());
    }
  }

  @Test
  void aWorkerRolledBackAfterUpgradeNodeSaysNothingAboutStaticPods(TestWorkflowEnvironment env, Worker worker) {
    failAt(UpgradeStep.UPGRADE);

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> start(env, worker, id("worker-1")).upgrade(request("worker-1", NodeRole.WORKER, false)));

    NodeFailure failure = nodeFailure(e, UpgradeFailures.KUBEADM_UPGRADE_FAILED);
    assertEquals(NodePhase.ROLLED_BACK, failure.phase());
    assertFalse(failure.message().contains("static pods"), failure.message());
    verify(nodes).uncordonNode(any());
  }

  @Test
  void aFailedRestoreAfterUpgradeApplyLeavesTheNodeCordonedAndSaysWhatKubeadmKept(
      TestWorkflowEnvironment env, Worker worker) {
    failAt(UpgradeStep.VERIFY);
    when(hosts.restoreBinaries(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ROLLBACK_FAILED, "no backup of /usr/bin/kubelet"));

    WorkflowFailedException e = assertThrows(WorkflowFailedException.class,
        () -> start(env, worker, id("cp-1")).upgrade(request("cp-1", NodeRole.CONTROL_PLANE, true)));

    NodeFailure failure = nodeFailure(e, UpgradeFailures.ROLLBACK_FAILED);
    assertEquals(NodePhase.ROLLBACK_FAILED, failure.phase());
    assertTrue(failure.message().contains("left cordoned"), failure.message());
    assertTrue(failure.message().contains("kubeadm-backup-etcd-*"), failure.message());
    verify(nodes, never()).uncordonNode(any());
  }

  @Test
  void aNodeAlreadyAtTheTargetSkipsTheUpgradeCommandToo(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("cp-1", KUBEADM_TO));
    List<HostActivities.InstalledFile> installed = Fixtures.kubeadmArtifacts().stream()
        .map(a -> new HostActivities.InstalledFile(a.installPath(), a.sha256())).toList();
    when(hosts.inspectHost(any())).thenReturn(new HostActivities.HostFacts("amd64", 10L << 30, installed, KUBEADM_TO, true));

    NodeUpgradeResult result = start(env, worker, id("cp-1")).upgrade(request("cp-1", NodeRole.CONTROL_PLANE, true));

    assertTrue(result.alreadyAtTarget());
    assertEquals(StepStatus.SKIPPED,
        result.steps().stream().filter(s -> s.step() == UpgradeStep.UPGRADE).findFirst().orElseThrow().status());
    verify(hosts, never()).runUpgradeCommand(any());
    verify(capi).recordMachineUpgrade(any());
  }

  /**
   * Records the committed kubeadm histories replayed by NodeUpgradeReplayTest (run with {@code
   * -Dhistories.update=true}): a first control plane upgraded, and one rolled back after {@code
   * kubeadm upgrade apply}.
   */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordReplayHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    dev.inplace.workflows.testing.HistoryFixtures.assumeNotRecorded("node-upgrade-kubeadm-first-control-plane.json", "node-upgrade-kubeadm-rolled-back.json");
    start(env, worker, id("cp-1")).upgrade(request("cp-1", NodeRole.CONTROL_PLANE, true));
    NodeUpgradeWorkflowTest.writeHistory(env, id("cp-1"), "node-upgrade-kubeadm-first-control-plane.json");

    failAt(UpgradeStep.VERIFY);
    String rolledBack = id("cp-1") + "-rollback";
    assertThrows(WorkflowFailedException.class,
        () -> stub(env, worker, rolledBack).upgrade(request("cp-1", NodeRole.CONTROL_PLANE, true)));
    NodeUpgradeWorkflowTest.writeHistory(env, rolledBack, "node-upgrade-kubeadm-rolled-back.json");
  }

  private String failAt(UpgradeStep step) {
    String type =
        switch (step) {
          case INSTALL -> UpgradeFailures.INSTALL_FAILED;
          case UPGRADE -> UpgradeFailures.KUBEADM_UPGRADE_FAILED;
          case RESTART -> UpgradeFailures.SERVICE_RESTART_FAILED;
          case VERIFY -> UpgradeFailures.VERIFY_TIMEOUT;
          default -> throw new IllegalArgumentException(step.name());
        };
    ApplicationFailure failure = UpgradeFailures.nonRetryable(type, "injected at " + step.cliName());
    switch (step) {
      case INSTALL -> when(hosts.installArtifacts(any())).thenThrow(failure);
      case UPGRADE -> doThrow(failure).when(hosts).runUpgradeCommand(any());
      case RESTART ->
          when(hosts.restartService(any())).thenThrow(failure).thenReturn(new ServiceResult("kubelet", true));
      case VERIFY ->
          doThrow(failure).when(nodes)
              .awaitNodeVersion(argThat((AwaitNodeRequest r) -> r != null && KUBEADM_TO.equals(r.expectedVersion())));
      default -> throw new IllegalArgumentException(step.name());
    }
    return type;
  }

  private static String stepMessage(NodeUpgradeResult result, UpgradeStep step) {
    return result.steps().stream().filter(s -> s.step() == step).findFirst().orElseThrow().message();
  }

  private static NodeFailure nodeFailure(WorkflowFailedException e, String expectedType) {
    ApplicationFailure cause = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(expectedType, cause.getType(), cause.getOriginalMessage());
    return cause.getDetails().get(NodeFailure.class);
  }
}
