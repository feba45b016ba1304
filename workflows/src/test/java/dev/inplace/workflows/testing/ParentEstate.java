package dev.inplace.workflows.testing;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodeActivities.NodesRequest;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.impl.ControlPlaneUpgradeWorkflowImpl;
import dev.inplace.workflows.impl.WorkersUpgradeWorkflowImpl;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import java.util.List;

/**
 * Mocked activities answering as a healthy cluster (control plane healthy, artifacts verified, hosts
 * on the old release, every Node Ready at {@link Fixtures#FROM}, Machines marked, objects recorded),
 * and the registration of both parent workflows with {@link FakeNodeUpgrade} children on a worker.
 * A test sets the cluster itself ({@code capi.describeCluster}).
 */
public final class ParentEstate {
  public final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  public final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  public final ClusterApiActivities capi = ParentFixtures.clusterApiMock();
  public final ChildScript script;

  public ParentEstate(ChildScript script) {
    this.script = script;
    when(nodes.awaitControlPlaneHealthy(any())).thenReturn(new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3")));
    when(hosts.verifyArtifacts(any())).thenReturn(new ArtifactCheckResult(List.of("k3s", "k3s-airgap-images")));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    when(hosts.snapshotEtcd(any())).thenAnswer(inv -> {
      EtcdSnapshotRequest r = inv.getArgument(0);
      return new EtcdSnapshotResult(r.name(), "/snapshots/" + r.name(), false);
    });
    doAnswer(inv -> {
          NodesRequest r = inv.getArgument(0);
          return new NodesState(r.nodeNames().stream().map(n -> Fixtures.readyAt(n, FROM)).toList(), List.of());
        })
        .when(nodes).inspectNodes(any());
    when(nodes.listBlockingBudgets(any())).thenReturn(new BudgetReport(List.of()));
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    when(capi.pauseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("pause")));
    when(capi.releaseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("unpause")));
    when(capi.recordControlPlaneVersion(any())).thenReturn(new BookkeepingResult(List.of("recorded")));
    when(capi.recordWorkerPoolVersion(any())).thenReturn(new BookkeepingResult(List.of("recorded")));
  }

  /** Registers both parents, fake children and the mocks on {@code worker}, starts the env, returns a stub. */
  public <T> T start(TestWorkflowEnvironment env, Worker worker, Class<T> type, String workflowId) {
    register(worker);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(
        type, WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  /** As {@link #start}, under the workflow ID a fixture's replay uses ({@link HistoryFixtures#idOf}). */
  public <T> T startFixtureRun(TestWorkflowEnvironment env, Worker worker, Class<T> type, String file) {
    return start(env, worker, type, HistoryFixtures.idOf(file));
  }

  /** Records a fixture (skipped when committed): a ControlPlaneUpgrade of three control planes that all upgrade. */
  public void recordHealthyControlPlaneRun(TestWorkflowEnvironment env, Worker worker, String file) {
    HistoryFixtures.assumeNotRecorded(file);
    org.mockito.Mockito.doAnswer(inv -> ParentFixtures.inventory(ParentFixtures.controlPlanes(3, Fixtures.FROM)))
        .when(capi).describeCluster(any());
    dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow run =
        startFixtureRun(env, worker, dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.class, file);
    org.junit.jupiter.api.Assertions.assertEquals(3, run.upgrade(
        new dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest(
            Fixtures.CLUSTER, ParentFixtures.template(), 0, null)).upgraded());
    HistoryFixtures.recordUnderItsId(env, file);
  }

  /** Registers both parents, fake children and the mocks on {@code worker}. */
  public void register(Worker worker) {
    register(worker, WorkersUpgradeWorkflowImpl.DEFAULT_HISTORY_LIMIT);
  }

  /** As {@link #register(Worker)}, the WorkersUpgrade continuing as new at {@code historyLimit} events. */
  public void register(Worker worker, int historyLimit) {
    register(worker, historyLimit, WorkersUpgradeWorkflowImpl.DEFAULT_PROBE_INTERVAL);
  }

  /** As {@link #register(Worker, int)}, a run probing the children handed over to it every {@code probeInterval}. */
  public void register(Worker worker, int historyLimit, java.time.Duration probeInterval) {
    worker.registerWorkflowImplementationTypes(ControlPlaneUpgradeWorkflowImpl.class);
    worker.registerWorkflowImplementationFactory(
        WorkersUpgradeWorkflow.class, () -> new WorkersUpgradeWorkflowImpl(historyLimit, probeInterval));
    worker.registerWorkflowImplementationFactory(NodeUpgradeWorkflow.class, () -> new FakeNodeUpgrade(script));
    worker.registerActivitiesImplementations(hosts, nodes, capi);
  }

  /** Every skip-remediation mark (true) and unmark (false) asked for {@code machine}, in order. */
  public List<Boolean> marksOf(String machine) {
    return org.mockito.Mockito.mockingDetails(capi).getInvocations().stream()
        .filter(i -> i.getMethod().getName().equals("markMachineUpgrading"))
        .map(i -> (ClusterApiActivities.MachineMarkRequest) i.getArgument(0))
        .filter(r -> r.machineName().equals(machine))
        .map(ClusterApiActivities.MachineMarkRequest::upgrading)
        .toList();
  }
}
