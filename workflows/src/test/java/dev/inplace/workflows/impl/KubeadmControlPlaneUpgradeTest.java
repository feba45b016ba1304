package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.FakeNodeUpgrade;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * ControlPlaneUpgrade of a kubeadm cluster: which child runs {@code kubeadm upgrade apply}, and the
 * etcd snapshot asked of the kubeadm host steps.
 */
class KubeadmControlPlaneUpgradeTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow =
      ParentFixtures.extension().registerWorkflowImplementationTypes(ControlPlaneUpgradeWorkflowImpl.class).build();

  /** What each child was asked: first control plane or not, by node (last attempt wins). */
  static final Map<String, Boolean> FIRST = new ConcurrentHashMap<>();

  /** A scripted child that records whether it was asked to upgrade the cluster's control plane. */
  public static class RecordingChild implements NodeUpgradeWorkflow {
    private final FakeNodeUpgrade delegate;

    public RecordingChild(ChildScript script) {
      this.delegate = new FakeNodeUpgrade(script);
    }

    @Override
    public NodeUpgradeResult upgrade(NodeUpgradeRequest request) {
      Workflow.sideEffect(Boolean.class, () -> FIRST.put(request.node().nodeName(), request.firstControlPlane()));
      return delegate.upgrade(request);
    }

    @Override
    public NodeProgress progress() {
      return delegate.progress();
    }

    @Override
    public void permit() {
      delegate.permit();
    }
  }

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = ParentFixtures.clusterApiMock();
  private final ChildScript script = new ChildScript();

  private static NodeUpgradeTemplate kubeadmTemplate() {
    NodeUpgradeTemplate k3s = ParentFixtures.template();
    return new NodeUpgradeTemplate(Distribution.KUBEADM, TO, Fixtures.kubeadmArtifacts(), HostProfile.kubeadmDefaults(),
        k3s.ssh(), k3s.drain(), k3s.readyTimeoutSeconds(), 0, "amd64");
  }

  @BeforeEach
  void kubeadmControlPlaneOfThree() {
    FIRST.clear();
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldKubeadmRelease());
    when(hosts.verifyArtifacts(any())).thenReturn(new ArtifactCheckResult(List.of("kubeadm")));
    when(nodes.listBlockingBudgets(any())).thenReturn(new BudgetReport(List.of()));
    when(hosts.snapshotEtcd(any())).thenReturn(new EtcdSnapshotResult("s", "/var/lib/inplace/etcd-snapshots/s.db", false));
    when(nodes.awaitControlPlaneHealthy(any())).thenReturn(new ControlPlaneHealth(true, List.of()));
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    when(capi.pauseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("pause KThreesControlPlane edge-1-control-plane")));
    when(capi.recordControlPlaneVersion(any())).thenReturn(new BookkeepingResult(List.of()));
  }

  private void cluster(List<MachineInfo> machines) {
    when(capi.describeCluster(any())).thenReturn(inventory(machines));
    when(nodes.inspectNodes(any())).thenAnswer(inv -> {
      return Fixtures.readyAtTheirKubelets(inv.getArgument(0), machines);
    });
  }

  private ControlPlaneUpgradeWorkflow start(TestWorkflowEnvironment env, Worker worker) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    worker.registerWorkflowImplementationFactory(NodeUpgradeWorkflow.class, () -> new RecordingChild(script));
    env.start();
    return env.getWorkflowClient().newWorkflowStub(ControlPlaneUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO))
            .setTaskQueue(worker.getTaskQueue()).build());
  }

  @Test
  void onlyTheFirstControlPlaneRunsUpgradeApply(TestWorkflowEnvironment env, Worker worker) {
    cluster(controlPlanes(3, Fixtures.FROM));

    start(env, worker).upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, kubeadmTemplate(), 0, null));

    assertEquals(Map.of("cp-1", true, "cp-2", false, "cp-3", false), FIRST);
    verify(hosts).snapshotEtcd(argThat(r -> r.distribution() == Distribution.KUBEADM && "cp-1".equals(r.host().nodeName())));
    verify(nodes, org.mockito.Mockito.times(3))
        .awaitControlPlaneHealthy(argThat(r -> !r.requireEtcdVoters()));
  }

  @Test
  void whenTheFirstIsSkippedAfterARollbackTheNextOneRunsUpgradeApply(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    cluster(controlPlanes(3, Fixtures.FROM));
    script.failsOnce("cp-1", UpgradeStep.UPGRADE, UpgradeFailures.KUBEADM_UPGRADE_FAILED, NodePhase.ROLLED_BACK,
        Duration.ofMinutes(1));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, kubeadmTemplate(), 0, null));
    ParentFixtures.awaitProgress(env, run, Duration.ofSeconds(10),
        p -> p.phase() == dev.inplace.workflows.api.UpgradeProgress.RunPhase.HALTED);

    run.skipNode("cp-1");
    WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, Object.class);

    assertEquals(Map.of("cp-1", true, "cp-2", true, "cp-3", false), FIRST);
  }

  /**
   * A control plane starts each node with its turn (kubeadm: no node prepared ahead). A node retried
   * while its failed run's Machine is still being unmarked starts once that unmark has ended
   * (parent-starts-after-old-thread): before, it started at once, the old thread's end then took it
   * out of the window, and the next control plane started beside it.
   */
  @Test
  void aNodeRetriedWhileItsMachineIsStillBeingUnmarkedStartsAfterTheUnmarkAndAloneInTheWindow(
      TestWorkflowEnvironment env, Worker worker) throws Exception {
    ControlPlaneUpgradeWorkflow run = retryWhileUnmarking(env, worker);

    assertEquals(List.of("cp-1", "cp-2", "cp-2", "cp-3"), script.starts());
    assertEquals(1, script.maxConcurrent(), "one control plane at a time: " + script.runs());
    assertEquals(3, run.progress().nodes().stream().filter(n -> n.phase() == NodePhase.UPGRADED).count(),
        run.progress().nodes().toString());
  }

  /** Replay fixture of that path (recorded with -Dhistories.update=true). */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordRetriedWhileUnmarking(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(RETRIED_WHILE_UNMARKING);
    retryWhileUnmarking(env, worker);
    HistoryFixtures.record(env, WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO), null, RETRIED_WHILE_UNMARKING);
  }

  static final String RETRIED_WHILE_UNMARKING = "cp-upgrade-retried-while-unmarking.json";

  /** cp-2 fails, and is retried while its Machine's unmark still runs; returns the ended run. */
  private ControlPlaneUpgradeWorkflow retryWhileUnmarking(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    cluster(controlPlanes(3, Fixtures.FROM));
    // No timer before cp-2 has failed: the test waits for its unmark in real time.
    script.everyNodeTakes(Duration.ofMinutes(2)).takes("cp-1", Duration.ZERO);
    script.failsOnce("cp-2", UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, NodePhase.ROLLED_BACK, Duration.ZERO);
    CountDownLatch unmarking = new CountDownLatch(1);
    CountDownLatch retried = new CountDownLatch(1);
    when(capi.markMachineUpgrading(any())).thenAnswer(inv -> {
      ClusterApiActivities.MachineMarkRequest mark = inv.getArgument(0);
      if (mark.machineName().equals("edge-1-cp-2") && !mark.upgrading() && unmarking.getCount() > 0) {
        unmarking.countDown();
        retried.await(10, TimeUnit.SECONDS); // the failed run's unmark lasts until the retry is in
      }
      return new MachineMarkResult(true);
    });
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, kubeadmTemplate(), 0, null));
    assertTrue(unmarking.await(60, TimeUnit.SECONDS), "cp-2 failed and its Machine is being unmarked");

    run.retryNode("cp-2");
    retried.countDown();
    WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, Object.class);
    return run;
  }

  @Test
  void aControlPlaneAlreadyAtTheTargetMeansUpgradeApplyHasRun(TestWorkflowEnvironment env, Worker worker) {
    List<MachineInfo> machines = List.of(
        ParentFixtures.controlPlane(1, TO), ParentFixtures.controlPlane(2, Fixtures.FROM),
        ParentFixtures.controlPlane(3, Fixtures.FROM));
    cluster(machines);

    start(env, worker).upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, kubeadmTemplate(), 0, null));

    assertEquals(Map.of("cp-2", false, "cp-3", false), FIRST);
  }
}
