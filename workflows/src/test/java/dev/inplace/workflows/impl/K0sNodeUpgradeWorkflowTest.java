package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordResult;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.BackupResult;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.InstallResult;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostActivities.ServiceResult;
import dev.inplace.workflows.api.HostActivities.StageResult;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.CordonResult;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodeVersion;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeActivities.UncordonResult;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeTarget;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A k0s Node reports {@code vX.Y.Z+k0s} for the release {@code vX.Y.Z+k0s.N}: a node already at
 * the release is skipped (no k0s stop/start again), and a control plane at the release is not
 * behind a worker's target (change node-upgrade-k0s-node-version).
 */
class K0sNodeUpgradeWorkflowTest {
  static final String FROM = "v1.30.6+k0s.0";
  static final String TO = "v1.31.2+k0s.0";
  /** What a k0s Node's kubelet reports for {@link #TO}. */
  static final String TO_AS_REPORTED = "v1.31.2+k0s";
  static final String NEW_K0S_SHA = "d".repeat(64);
  static final String BUNDLE_SHA = "e".repeat(64);

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
  private final ClusterApiActivities capi = mock(ClusterApiActivities.class, withSettings().withoutAnnotations());

  static List<Artifact> artifacts(String release) {
    String tag = release.substring(1).replace('+', '-');
    return List.of(
        new Artifact("k0s", ArtifactKind.BINARY, "/cache/k0s", NEW_K0S_SHA, 96 << 20, "/usr/local/bin/k0s", "0755"),
        new Artifact("k0s-airgap-bundle", ArtifactKind.IMAGE_ARCHIVE, "/cache/bundle", BUNDLE_SHA, 100 << 20,
            "/var/lib/k0s/images/k0s-airgap-bundle-" + tag + "-amd64", "0644"));
  }

  static NodeUpgradeRequest request(String node, NodeRole role, String release) {
    return new NodeUpgradeRequest(
        new NodeTarget(Fixtures.CLUSTER, node + "-machine", node, role, "127.0.0.11"),
        Distribution.K0S, release, artifacts(release), HostProfile.k0sDefaults(),
        new SshSettings("inplace", 2222, "edge-1-ssh-key", "edge-1-known-hosts", null),
        new DrainOptions(30, true, false, PdbBlockedAction.FAIL, false), 60, 0, "amd64");
  }

  /** The host with {@code release}'s files installed. */
  static HostFacts hostWith(String release) {
    List<InstalledFile> installed = artifacts(release).stream()
        .map(a -> new InstalledFile(a.installPath(), a.sha256()))
        .toList();
    return new HostFacts("amd64", 10L << 30, installed, release, true);
  }

  static HostFacts hostWithOldRelease() {
    return new HostFacts("amd64", 10L << 30,
        List.of(new InstalledFile("/usr/local/bin/k0s", "f".repeat(64))), FROM, true);
  }

  @BeforeEach
  void estate() {
    when(hosts.stageArtifacts(any())).thenReturn(new StageResult(List.of("k0s"), List.of(), 96 << 20));
    when(nodes.cordonNode(any())).thenReturn(new CordonResult(true, false));
    when(nodes.drainNode(any())).thenReturn(new DrainResult(1, 0, 1, 0, 1));
    when(hosts.backupBinaries(any())).thenReturn(new BackupResult(List.of("/usr/local/bin/k0s"), List.of()));
    when(hosts.installArtifacts(any())).thenReturn(new InstallResult(List.of("k0s"), List.of()));
    when(hosts.restartService(any())).thenReturn(new ServiceResult("k0sworker", true));
    when(nodes.awaitNodeVersion(any())).thenReturn(new NodeState("worker-1", true, false, TO_AS_REPORTED, null));
    when(nodes.uncordonNode(any())).thenReturn(new UncordonResult(true, ""));
    when(capi.recordMachineUpgrade(any())).thenReturn(new MachineRecordResult(TO, List.of()));
    when(nodes.controlPlaneVersions(any()))
        .thenReturn(new NodeVersions(List.of(new NodeVersion("cp-1", TO_AS_REPORTED))));
  }

  private NodeUpgradeWorkflow start(TestWorkflowEnvironment env, Worker worker, String id) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(worker.getTaskQueue()).build());
  }

  @Test
  void aK0sNodeAlreadyAtTheReleaseIsSkippedInsteadOfStoppedAndStartedAgain(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", true, false, TO_AS_REPORTED, null));
    when(hosts.inspectHost(any())).thenReturn(hostWith(TO));

    NodeUpgradeResult result = start(env, worker, "k0s-at-target").upgrade(request("worker-1", NodeRole.WORKER, TO));

    assertTrue(result.alreadyAtTarget());
    verify(hosts, never()).stageArtifacts(any());
    verify(nodes, never()).cordonNode(any());
    verify(hosts, never()).restartService(any());
    verify(capi).recordMachineUpgrade(any());
    assertEquals(StepStatus.SKIPPED,
        result.steps().stream().filter(s -> s.step() == UpgradeStep.RESTART).findFirst().orElseThrow().status());
  }

  @Test
  void aK0sNodeOnAnotherBuildOfTheSamePatchIsUpgraded(TestWorkflowEnvironment env, Worker worker) {
    // v1.31.2+k0s.1 is installed by the request; the Node shows +k0s for .0 and .1 alike: the digests decide.
    String build1 = "v1.31.2+k0s.1";
    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", true, false, TO_AS_REPORTED, null));
    when(hosts.inspectHost(any())).thenReturn(hostWithOldRelease());

    NodeUpgradeResult result = start(env, worker, "k0s-next-build").upgrade(request("cp-1", NodeRole.CONTROL_PLANE, build1));

    assertFalse(result.alreadyAtTarget());
    verify(hosts).restartService(any());
  }

  @Test
  void aK0sWorkerIsNotRefusedWhenTheControlPlaneRunsItsRelease(TestWorkflowEnvironment env, Worker worker) {
    // The control plane runs v1.31.2+k0s.1 and its Node reports v1.31.2+k0s: not behind the worker's target.
    String build1 = "v1.31.2+k0s.1";
    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", true, false, "v1.30.6+k0s", null));
    when(hosts.inspectHost(any())).thenReturn(hostWithOldRelease());

    NodeUpgradeResult result = start(env, worker, "k0s-worker").upgrade(request("worker-1", NodeRole.WORKER, build1));

    assertFalse(result.alreadyAtTarget());
    verify(hosts).installArtifacts(any());
  }

  /** Records the histories of change node-upgrade-k0s-node-version: a k0s node skipped, and one upgraded. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordK0sNodeVersionHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String skipped = "node-upgrade-k0s-already-at-target";
    String upgraded = "node-upgrade-k0s-upgraded";
    HistoryFixtures.assumeNotRecorded(skipped + ".json", upgraded + ".json");
    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", true, false, TO_AS_REPORTED, null));
    when(hosts.inspectHost(any())).thenReturn(hostWith(TO));
    start(env, worker, skipped).upgrade(request("worker-1", NodeRole.WORKER, TO));
    HistoryFixtures.record(env, skipped, null, skipped + ".json");

    when(nodes.inspectNode(any())).thenReturn(new NodeState("worker-1", true, false, "v1.30.6+k0s", null));
    when(hosts.inspectHost(any())).thenReturn(hostWithOldRelease());
    env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(upgraded).setTaskQueue(worker.getTaskQueue()).build())
        .upgrade(request("worker-1", NodeRole.WORKER, TO));
    HistoryFixtures.record(env, upgraded, null, upgraded + ".json");
  }
}
