package dev.inplace.worker.watch;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.watch.WatcherOptions.LeaderElection;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@EnableKubernetesMockClient(crud = true, https = false)
@Timeout(120)
class LeaderElectionTest {
  KubernetesClient client;
  private WatcherHarness h;

  @BeforeEach
  void setUp() {
    h = new WatcherHarness(client);
  }

  @AfterEach
  void tearDown() {
    h.close();
  }

  private static WatcherOptions replica(String identity) {
    return WatcherHarness.fast().withLeaderElection(
        new LeaderElection("inplace-system", "inplace-watcher", identity,
            Duration.ofSeconds(3), Duration.ofSeconds(2), Duration.ofMillis(250)));
  }

  @Test
  void onlyTheLeaseHolderActsAndTheOtherReplicaTakesOverWhenItGoes() throws Exception {
    UpgradeWatcher a = h.watcher(replica("replica-a"));
    UpgradeWatcher b = h.watcher(replica("replica-b"));
    await().atMost(WatcherHarness.WAIT).until(() -> a.isLeading() || b.isLeading());
    Thread.sleep(1000);
    assertNotEquals(a.isLeading(), b.isLeading(), "exactly one replica acts");
    UpgradeWatcher leader = a.isLeading() ? a : b;
    UpgradeWatcher follower = leader == a ? b : a;
    String holder = h.kube.leases().inNamespace("inplace-system").withName("inplace-watcher").get().getSpec().getHolderIdentity();
    assertEquals(leader == a ? "replica-a" : "replica-b", holder);

    ControlPlaneUpgrade cr = h.create(TestEstate.controlPlaneUpgrade("ha", TestEstate.spec(new ControlPlaneUpgradeSpec())));
    String id = WorkflowIds.controlPlaneUpgradeForResource(TestEstate.NAMESPACE, "ha", cr.getMetadata().getUid());
    h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.RUNNING);

    leader.close(); // releases the Lease
    await().atMost(WatcherHarness.WAIT).until(follower::isLeading);
    h.signal(id, FakeRun.FINISH);
    h.signal(id, FakeRun.FINISH);
    h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.SUCCEEDED); // mirrored by the new leader
    assertEquals(List.of(id), h.starts);
  }
}
