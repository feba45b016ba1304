package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeResult;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeResult;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.FakeNodeUpgrade;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Parent runs of a k0s cluster to a {@code +k0s.1} release (change parent-k0s-node-version): a k0s
 * Node reports {@code v1.31.2+k0s} for every {@code v1.31.2+k0s.N}, so the parents hold the Node's
 * version as reported ({@code KubeVersion.nodeRuns}) and the Machine's spec.version tells the builds
 * apart ({@code KubeVersion.machineAt}).
 */
class K0sParentUpgradeTest {
  static final String PREVIOUS = "v1.30.6+k0s.0";
  static final String PREVIOUS_BUILD = "v1.31.2+k0s.0";
  static final String TO = "v1.31.2+k0s.1";
  /** What a k0s Node reports for {@link #PREVIOUS_BUILD} and {@link #TO} alike. */
  static final String REPORTED = "v1.31.2+k0s";

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = ParentFixtures.clusterApiMock();
  private final ChildScript script = new ChildScript();

  static NodeUpgradeTemplate k0sTemplate() {
    NodeUpgradeTemplate k3s = ParentFixtures.template();
    return new NodeUpgradeTemplate(Distribution.K0S, TO, K0sNodeUpgradeWorkflowTest.artifacts(TO),
        HostProfile.k0sDefaults(), k3s.ssh(), k3s.drain(), k3s.readyTimeoutSeconds(), 0, "amd64");
  }

  /** A k0s Machine: its spec.version is {@code machine}, its Node reports {@code node}. */
  static MachineInfo machine(String name, NodeRole role, String machine, String node) {
    boolean worker = role == NodeRole.WORKER;
    return new MachineInfo("edge-1-" + name, name, role, worker ? "10.0.1.1" : "10.0.0.1", machine, node,
        worker ? POOL : "");
  }

  @BeforeEach
  void answers() {
    when(hosts.verifyArtifacts(any())).thenReturn(new ArtifactCheckResult(List.of("k0s", "k0s-airgap-bundle")));
    when(hosts.inspectHost(any())).thenReturn(K0sNodeUpgradeWorkflowTest.hostWithOldRelease());
    when(hosts.snapshotEtcd(any())).thenAnswer(inv -> {
      EtcdSnapshotRequest r = inv.getArgument(0);
      return new EtcdSnapshotResult(r.name(), "/var/lib/inplace/k0s-backups/" + r.name(), false);
    });
    when(nodes.listBlockingBudgets(any())).thenReturn(new BudgetReport(List.of()));
    when(nodes.awaitControlPlaneHealthy(any())).thenReturn(new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3")));
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    when(capi.pauseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("pause")));
    when(capi.releaseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("unpause")));
    when(capi.recordControlPlaneVersion(any())).thenReturn(new BookkeepingResult(List.of("recorded")));
    when(capi.recordWorkerPoolVersion(any())).thenReturn(new BookkeepingResult(List.of("recorded")));
  }

  private void cluster(List<MachineInfo> machines) {
    doReturn(inventory(machines)).when(capi).describeCluster(any());
    doAnswer(inv -> {
      return Fixtures.readyAtTheirKubelets(inv.getArgument(0), machines);
    }).when(nodes).inspectNodes(any());
  }

  private static List<MachineInfo> controlPlanes(String machine, String node) {
    List<MachineInfo> cps = new ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      cps.add(machine("cp-" + i, NodeRole.CONTROL_PLANE, machine, node));
    }
    return cps;
  }

  /** worker-a-1 on the previous build of the patch, worker-a-2 on the previous minor, worker-a-3 done. */
  private static List<MachineInfo> mixedPool() {
    List<MachineInfo> all = new ArrayList<>(controlPlanes(TO, REPORTED));
    all.add(machine(POOL + "-1", NodeRole.WORKER, PREVIOUS_BUILD, REPORTED));
    all.add(machine(POOL + "-2", NodeRole.WORKER, PREVIOUS, "v1.30.6+k0s"));
    all.add(machine(POOL + "-3", NodeRole.WORKER, TO, REPORTED));
    return all;
  }

  private <T> T start(TestWorkflowEnvironment env, Worker worker, Class<T> type, String workflowId) {
    worker.registerWorkflowImplementationTypes(ControlPlaneUpgradeWorkflowImpl.class);
    worker.registerWorkflowImplementationFactory(WorkersUpgradeWorkflow.class, WorkersUpgradeWorkflowImpl::new);
    worker.registerWorkflowImplementationFactory(NodeUpgradeWorkflow.class, () -> new FakeNodeUpgrade(script));
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(
        type, WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  private static WorkersUpgradeRequest workersRequest() {
    return new WorkersUpgradeRequest(Fixtures.CLUSTER, POOL, k0sTemplate(), "1", FailurePolicy.HALT, 0, 0, null, null);
  }

  @Test
  void workersUpgradeToAPlusK0sOneReleaseOnceTheControlPlaneRunsIt(TestWorkflowEnvironment env, Worker worker) {
    cluster(mixedPool());
    WorkersUpgradeWorkflow run = start(env, worker, WorkersUpgradeWorkflow.class,
        WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO));

    WorkersUpgradeResult result = run.upgrade(workersRequest());

    assertEquals(3, result.upgraded(), result.toString());
    assertEquals(0, result.failed());
    // The previous build of the patch is upgraded although its Node reports +k0s; the node whose
    // Machine records the release is done and gets no child.
    assertEquals(List.of(POOL + "-1", POOL + "-2"), script.starts());
    verify(capi).recordWorkerPoolVersion(argThat(r -> TO.equals(r.version())));
  }

  @Test
  void aControlPlaneOnThePreviousBuildTakesItsBackupAndUpgradesEveryController(
      TestWorkflowEnvironment env, Worker worker) {
    cluster(controlPlanes(PREVIOUS_BUILD, REPORTED));
    ControlPlaneUpgradeWorkflow run = start(env, worker, ControlPlaneUpgradeWorkflow.class,
        WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO));

    ControlPlaneUpgradeResult result = run.upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, k0sTemplate(), 0, null));

    assertEquals(3, result.upgraded(), result.toString());
    assertEquals(RunOrder.snapshotName(TO), result.etcdSnapshot());
    assertEquals(List.of("cp-1", "cp-2", "cp-3"), script.starts());
    verify(hosts, org.mockito.Mockito.times(3)).inspectHost(any());
    verify(capi).recordControlPlaneVersion(argThat(r -> TO.equals(r.version())));
  }

  @Test
  void aControlPlaneAlreadyAtThePlusK0sOneReleaseChangesNothing(TestWorkflowEnvironment env, Worker worker) {
    cluster(controlPlanes(TO, REPORTED));
    ControlPlaneUpgradeWorkflow run = start(env, worker, ControlPlaneUpgradeWorkflow.class,
        WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO));

    ControlPlaneUpgradeResult result = run.upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, k0sTemplate(), 0, null));

    assertEquals(3, result.upgraded(), result.toString());
    assertNull(result.etcdSnapshot());
    assertTrue(script.starts().isEmpty(), script.starts().toString());
    verify(hosts, never()).snapshotEtcd(any());
    verify(hosts, never()).inspectHost(any());
  }

  /** Records the histories of change parent-k0s-node-version: both parents to a +k0s.1 release. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordK0sNextBuildHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String cpFile = "cp-upgrade-k0s-next-build.json";
    String workersFile = "workers-upgrade-k0s-next-build.json";
    HistoryFixtures.assumeNotRecorded(cpFile, workersFile);
    List<MachineInfo> machines = new ArrayList<>(controlPlanes(PREVIOUS_BUILD, REPORTED));
    machines.addAll(mixedPool().subList(3, 6));
    cluster(machines);
    String cpId = WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO);
    ControlPlaneUpgradeResult cp = start(env, worker, ControlPlaneUpgradeWorkflow.class, cpId)
        .upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, k0sTemplate(), 0, null));
    assertEquals(3, cp.upgraded());
    HistoryFixtures.record(env, cpId, null, cpFile);

    cluster(mixedPool());
    String workersId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
    WorkersUpgradeResult workers = env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(workersId).setTaskQueue(worker.getTaskQueue()).build())
        .upgrade(workersRequest());
    assertEquals(3, workers.upgraded());
    HistoryFixtures.record(env, workersId, null, workersFile);
  }
}
