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
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.FakeNodeUpgrade;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.client.WorkflowExecutionDescription;
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
 * The NodeUpgrade children of the parents carry a static summary and details (change
 * parent-child-descriptions), read back from the server with DescribeWorkflowExecution as the
 * Temporal UI and {@code temporal workflow describe} read them.
 */
class ChildRunDescriptionTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = ParentFixtures.clusterApiMock();
  private final ChildScript script = new ChildScript();

  @BeforeEach
  void answers() {
    when(hosts.verifyArtifacts(any())).thenReturn(new ArtifactCheckResult(List.of("k3s", "k3s-airgap-images")));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    when(hosts.snapshotEtcd(any())).thenAnswer(inv -> {
      EtcdSnapshotRequest r = inv.getArgument(0);
      return new EtcdSnapshotResult(r.name(), "/snapshots/" + r.name(), false);
    });
    when(nodes.listBlockingBudgets(any())).thenReturn(new BudgetReport(List.of()));
    when(nodes.awaitControlPlaneHealthy(any())).thenReturn(new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3")));
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    when(capi.pauseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("pause")));
    when(capi.recordControlPlaneVersion(any())).thenReturn(new BookkeepingResult(List.of("recorded")));
    when(capi.recordWorkerPoolVersion(any())).thenReturn(new BookkeepingResult(List.of("recorded")));
  }

  private void cluster(List<MachineInfo> machines) {
    doReturn(inventory(machines)).when(capi).describeCluster(any());
    doAnswer(inv -> {
      return Fixtures.readyAtTheirKubelets(inv.getArgument(0), machines);
    }).when(nodes).inspectNodes(any());
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

  private static WorkflowExecutionDescription describe(TestWorkflowEnvironment env, String machine) {
    return env.getWorkflowClient().newUntypedWorkflowStub(WorkflowIds.nodeUpgrade("fleet", machine, TO)).describe();
  }

  private static WorkersUpgradeRequest workersRequest() {
    return new WorkersUpgradeRequest(Fixtures.CLUSTER, POOL, ParentFixtures.template(), "2", FailurePolicy.HALT, 0, 0,
        null, null);
  }

  @Test
  void aWorkerChildNamesItsNodeVersionsPoolAndParent(TestWorkflowEnvironment env, Worker worker) {
    cluster(concat(controlPlanes(3, TO), workers(POOL, 2, FROM)));
    String parentId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
    start(env, worker, WorkersUpgradeWorkflow.class, parentId).upgrade(workersRequest());

    WorkflowExecutionDescription child = describe(env, "edge-1-worker-a-2");
    assertEquals("Upgrade worker-a-2 (edge-1-worker-a-2) " + FROM + " -> " + TO + ", pool worker-a",
        child.getStaticSummary());
    String details = child.getStaticDetails();
    assertTrue(details.startsWith("**NodeUpgrade** of node `worker-a-2` (Machine `edge-1-worker-a-2`, WORKER) in cluster"
        + " `fleet/edge-1` from `" + FROM + "` to `" + TO + "`"), details);
    assertTrue(details.contains("- pool: MachineDeployment `worker-a`"), details);
    assertTrue(details.contains("- before: Machine `" + FROM + "`, Node reports `" + FROM + "`"), details);
    assertTrue(details.contains("- host: 10.0.1.2 (k3s, amd64)"), details);
    assertTrue(details.contains("- artifacts: k3s 64 MiB, k3s-airgap-images 8 MiB"), details);
    assertTrue(details.contains("- drain: timeout 30 s, PDB blocked: FAIL; ready timeout 60 s"), details);
    assertTrue(details.contains("- started by: WorkersUpgrade `" + parentId + "`"), details);
    assertFalse(details.contains("ssh-key") || details.contains("known-hosts"), "no Secret names: " + details);
  }

  @Test
  void aControlPlaneChildSaysSo(TestWorkflowEnvironment env, Worker worker) {
    cluster(controlPlanes(3, FROM));
    String parentId = WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO);
    start(env, worker, ControlPlaneUpgradeWorkflow.class, parentId)
        .upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, ParentFixtures.template(), 0, null));

    WorkflowExecutionDescription child = describe(env, "edge-1-cp-1");
    assertEquals("Upgrade cp-1 (edge-1-cp-1) " + FROM + " -> " + TO + ", control plane", child.getStaticSummary());
    String details = child.getStaticDetails();
    assertTrue(details.contains("(Machine `edge-1-cp-1`, CONTROL_PLANE)"), details);
    assertTrue(details.contains("- control plane: one node at a time, behind the health gate"), details);
    assertTrue(details.contains("- started by: ControlPlaneUpgrade `" + parentId + "`"), details);
  }

  @Test
  void aK0sChildShowsTheMachineBuildAndWhatTheNodeReports() {
    MachineInfo m = K0sParentUpgradeTest.machine("worker-a-1", NodeRole.WORKER, K0sParentUpgradeTest.PREVIOUS_BUILD,
        K0sParentUpgradeTest.REPORTED);
    var request = K0sParentUpgradeTest.k0sTemplate().forNode(m.target(Fixtures.CLUSTER));
    ChildRunDescription d = ChildRunDescription.of(m, request, "WorkersUpgrade", "w");
    assertEquals("Upgrade worker-a-1 (edge-1-worker-a-1) v1.31.2+k0s.0 -> v1.31.2+k0s.1, pool worker-a", d.summary());
    assertTrue(d.details().contains("- before: Machine `v1.31.2+k0s.0`, Node reports `v1.31.2+k0s`"), d.details());
  }

  /** Records the histories of change parent-child-descriptions: both parents with described children. */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordChildDescriptionHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String cpFile = "cp-upgrade-child-descriptions.json";
    String workersFile = "workers-upgrade-child-descriptions.json";
    HistoryFixtures.assumeNotRecorded(cpFile, workersFile);
    cluster(concat(controlPlanes(3, FROM), workers(POOL, 3, FROM)));
    String cpId = WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO);
    start(env, worker, ControlPlaneUpgradeWorkflow.class, cpId)
        .upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, ParentFixtures.template(), 0, null));
    HistoryFixtures.record(env, cpId, null, cpFile);

    cluster(concat(controlPlanes(3, TO), workers(POOL, 3, FROM)));
    String workersId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
    env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(workersId).setTaskQueue(worker.getTaskQueue()).build())
        .upgrade(workersRequest());
    HistoryFixtures.record(env, workersId, null, workersFile);
  }
}
