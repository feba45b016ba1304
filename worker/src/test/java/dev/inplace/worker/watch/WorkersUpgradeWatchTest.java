package dev.inplace.worker.watch;

import static dev.inplace.worker.watch.WatcherHarness.condition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.FailurePolicySpec;
import dev.inplace.worker.crd.FailurePolicyType;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.NodeRecord;
import dev.inplace.worker.crd.RunRecord;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@EnableKubernetesMockClient(crud = true, https = false)
@Timeout(120)
class WorkersUpgradeWatchTest {
  KubernetesClient client;
  KubernetesMockServer server;
  private WatcherHarness h;

  @BeforeEach
  void setUp() {
    h = new WatcherHarness(client);
  }

  @AfterEach
  void tearDown() {
    h.close();
  }

  private void controlPlaneAtTarget() {
    FakeControlPlaneUpgrade.NODES.forEach(n -> h.estate.setKubelet(n, TestEstate.TO));
  }

  private static String runId(WorkersUpgrade cr, String pool) {
    return WorkflowIds.workersUpgradeForResource(TestEstate.NAMESPACE, cr.getMetadata().getName(), cr.getMetadata().getUid(), pool);
  }

  @Test
  void everyMachineDeploymentGetsItsOwnRunWithTheFrozenWindowAndFailurePolicy() {
    controlPlaneAtTarget();
    h.watcher(WatcherHarness.fast());
    WorkersUpgrade cr = h.create(TestEstate.workersUpgrade("workers", TestEstate.spec(new WorkersUpgradeSpec())
        .setMaxUnavailable(new IntOrString("50%"))
        .setFailurePolicy(new FailurePolicySpec(FailurePolicyType.CONTINUE, 1))));

    UpgradeStatus running = h.awaitStatus(cr, s -> s.getNodes() != null && s.getNodes().size() == 4);
    List<String> ids = List.of(runId(cr, "md-a"), runId(cr, "md-b"));
    assertEquals(ids, running.getWorkflowIds());
    assertEquals(List.of("md-a", "md-b"), running.getRuns().stream().map(RunRecord::getMachineDeployment).toList());
    WorkersUpgradeRequest request = h.request(ids.get(0), WorkersUpgradeRequest.class);
    assertEquals("md-a", request.machineDeployment());
    assertEquals("50%", request.maxUnavailable());
    assertEquals(FailurePolicy.CONTINUE, request.onFailure());
    assertEquals(1, request.maxFailures());
    assertEquals(TestEstate.TO, request.template().targetVersion());

    for (String id : ids) {
      h.signal(id, FakeRun.FINISH);
      h.signal(id, FakeRun.FINISH);
    }
    UpgradeStatus done = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.SUCCEEDED);
    assertEquals("4/4", done.getProgress());
    assertEquals(List.of("md-a", "md-a", "md-b", "md-b"), done.getNodes().stream().map(NodeRecord::getPool).toList());
    assertTrue(condition(UpgradeCondition.READY, true, Reasons.SUCCEEDED).test(done));
    assertEquals(ids, h.starts);
  }

  @Test
  void aStartCutOffBetweenTwoPoolsStartsTheMissingPoolNextTimeInsteadOfRecordingIt() {
    controlPlaneAtTarget();
    WorkersUpgrade cr = h.create(TestEstate.workersUpgrade("workers", TestEstate.spec(new WorkersUpgradeSpec())
        .setMachineDeployments(List.of("md-a", "md-b"))));
    List<String> ids = List.of(runId(cr, "md-a"), runId(cr, "md-b"));
    h.failNextStart.add(ids.get(1)); // md-a's run starts, then Temporal fails md-b's start
    h.watcher(WatcherHarness.fast());

    UpgradeStatus running = h.awaitStatus(cr, s -> s.getNodes() != null && s.getNodes().size() == 4);
    assertEquals(ids, running.getWorkflowIds());
    assertEquals(ids, h.starts, "md-b's run was started on the next reconcile, md-a's attached to");
    assertEquals("md-b", h.request(ids.get(1), WorkersUpgradeRequest.class).machineDeployment());
    for (String id : ids) {
      h.signal(id, FakeRun.FINISH);
      h.signal(id, FakeRun.FINISH);
    }
    assertEquals("4/4", h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.SUCCEEDED).getProgress());
  }

  @Test
  void itWaitsForTheControlPlaneUpgradeOfItsClusterThenStarts() {
    h.watcher(WatcherHarness.fast());
    var cp = h.create(TestEstate.controlPlaneUpgrade("cp", TestEstate.spec(new ControlPlaneUpgradeSpec())));
    WorkersUpgrade cr = h.create(TestEstate.workersUpgrade("workers", TestEstate.spec(new WorkersUpgradeSpec())
        .setMachineDeployments(List.of("md-b"))));

    UpgradeStatus waiting = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.WAITING);
    assertTrue(condition(UpgradeCondition.PROGRESSING, true, Reasons.WAITING_FOR_CONTROL_PLANE).test(waiting));
    assertFalse(h.workers("workers").getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER));

    String cpRun = WorkflowIds.controlPlaneUpgradeForResource(TestEstate.NAMESPACE, "cp", cp.getMetadata().getUid());
    h.awaitStatus(cp, s -> s.getPhase() == UpgradePhase.RUNNING);
    h.signal(cpRun, FakeRun.FINISH);
    h.signal(cpRun, FakeRun.FINISH);
    h.awaitStatus(cp, s -> s.getPhase() == UpgradePhase.SUCCEEDED);
    assertEquals(List.of(cpRun), h.starts, "workers wait until the nodes report the target");

    controlPlaneAtTarget(); // what the upgraded kubelets report
    UpgradeStatus started = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.RUNNING);
    assertEquals(List.of(runId(cr, "md-b")), started.getWorkflowIds());
    assertEquals(List.of(cpRun, runId(cr, "md-b")), h.starts);
  }

  @Test
  void whileItWaitsItReadsTheControlPlaneUpgradesNotTheClusterAgainOnEveryTick() throws InterruptedException {
    h.watcher(WatcherHarness.fast());
    var cp = h.create(TestEstate.controlPlaneUpgrade("cp", TestEstate.spec(new ControlPlaneUpgradeSpec())));
    WorkersUpgrade cr = h.create(TestEstate.workersUpgrade("workers", TestEstate.spec(new WorkersUpgradeSpec())));
    h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.WAITING);
    // The ControlPlaneUpgrade's own intake reads the cluster too, in either order with the
    // WorkersUpgrade's first look: only once it runs are the cluster reads left the waiting one's.
    h.awaitStatus(cp, s -> s.getPhase() == UpgradePhase.RUNNING);
    while (server.takeRequest(0, TimeUnit.MILLISECONDS) != null) {
      // what was asked up to here: each spec judged against the cluster once
    }

    Thread.sleep(1_200); // six status ticks of 200 ms
    List<String> asked = new ArrayList<>();
    for (RecordedRequest r; (r = server.takeRequest(0, TimeUnit.MILLISECONDS)) != null; ) {
      asked.add(r.getMethod() + " " + r.getPath());
    }

    assertTrue(asked.stream().anyMatch(r -> r.startsWith("GET") && r.contains("/controlplaneupgrades")), asked.toString());
    assertTrue(asked.stream().noneMatch(r -> r.contains("/clusters") || r.contains("/machines") || r.contains("/secrets")),
        asked.toString());
    assertEquals(UpgradePhase.WAITING, h.workers("workers").getStatus().getPhase());
  }

  @Test
  void withTheControlPlaneBehindAndNoControlPlaneUpgradeItIsRefused() {
    h.watcher(WatcherHarness.fast());
    WorkersUpgrade cr = h.create(TestEstate.workersUpgrade("early", TestEstate.spec(new WorkersUpgradeSpec())));

    UpgradeStatus refused = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.FAILED);
    assertTrue(condition(UpgradeCondition.FAILED, true, UpgradeFailures.UNSUPPORTED_VERSION_SKEW).test(refused));
    assertEquals(List.of(), h.starts);
  }
}
