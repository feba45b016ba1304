package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The watcher hears of a run's end when it happens: with a status interval and informer resync of an
 * hour, neither the timer nor a re-delivered event can be why a resource moves on within the tests'
 * wait.
 */
@EnableKubernetesMockClient(crud = true, https = false)
@Timeout(120)
class RunEndsMirroredAtOnceTest {
  private static final Duration HOUR = Duration.ofHours(1);

  KubernetesClient client;
  private WatcherHarness h;

  @BeforeEach
  void setUp() {
    h = new WatcherHarness(client);
    h.watcher(WatcherOptions.defaults().withStatusInterval(HOUR).withResyncPeriod(HOUR));
  }

  @AfterEach
  void tearDown() {
    h.close();
  }

  private ControlPlaneUpgrade controlPlaneUpgrade() {
    return h.create(TestEstate.controlPlaneUpgrade("cp", TestEstate.spec(new ControlPlaneUpgradeSpec())));
  }

  private static String runId(ControlPlaneUpgrade cr) {
    return WorkflowIds.controlPlaneUpgradeForResource(TestEstate.NAMESPACE, cr.getMetadata().getName(), cr.getMetadata().getUid());
  }

  private void finish(String workflowId) {
    h.signal(workflowId, FakeRun.FINISH);
    h.signal(workflowId, FakeRun.FINISH);
  }

  @Test
  void aResourceWhoseRunCompletesReachesSucceededWithoutWaitingForTheStatusInterval() {
    ControlPlaneUpgrade cr = controlPlaneUpgrade();
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getWorkflowIds() != null && s.getWorkflowIds().contains(id));

    finish(id);

    UpgradeStatus done = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.SUCCEEDED);
    assertEquals("2/2", done.getProgress());
  }

  @Test
  void aResourceWhoseRunIsTerminatedEndsWithoutWaitingForTheStatusInterval() {
    ControlPlaneUpgrade cr = controlPlaneUpgrade();
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getWorkflowIds() != null && s.getWorkflowIds().contains(id));

    h.client.newUntypedWorkflowStub(id).terminate("ended by the test");

    UpgradeStatus ended = h.awaitStatus(cr, s -> s.getPhase() != null && s.getPhase().terminal());
    assertEquals(UpgradePhase.FAILED, ended.getPhase());
  }

  @Test
  void aWaitingWorkersUpgradeStartsOnceItsControlPlaneUpgradeSucceedsWithoutWaitingForTheStatusInterval() {
    ControlPlaneUpgrade cp = controlPlaneUpgrade();
    WorkersUpgrade workers = h.create(TestEstate.workersUpgrade("workers", TestEstate.spec(new WorkersUpgradeSpec())
        .setMachineDeployments(List.of("md-b"))));
    String cpRun = runId(cp);
    h.awaitStatus(workers, s -> s.getPhase() == UpgradePhase.WAITING);
    h.awaitStatus(cp, s -> s.getWorkflowIds() != null && s.getWorkflowIds().contains(cpRun));

    // What the upgraded kubelets report before the run records its end; the WorkersUpgrade still
    // waits for the ControlPlaneUpgrade itself to end.
    FakeControlPlaneUpgrade.NODES.forEach(n -> h.estate.setKubelet(n, TestEstate.TO));
    finish(cpRun);

    UpgradeStatus started = h.awaitStatus(workers, s -> s.getPhase() == UpgradePhase.RUNNING);
    String workersRun = WorkflowIds.workersUpgradeForResource(
        TestEstate.NAMESPACE, "workers", workers.getMetadata().getUid(), "md-b");
    assertEquals(List.of(workersRun), started.getWorkflowIds());
    assertEquals(UpgradePhase.SUCCEEDED, h.controlPlane("cp").getStatus().getPhase());
    assertEquals(List.of(cpRun, workersRun), h.starts);
    assertTrue(h.workers("workers").getMetadata().getFinalizers().contains(dev.inplace.worker.crd.InplaceCrds.FINALIZER));
  }
}
