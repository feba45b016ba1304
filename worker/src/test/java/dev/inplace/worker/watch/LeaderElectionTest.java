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
import java.util.Optional;
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

  /**
   * The product's lease and renew deadline (15 s, 10 s), tried every 250 ms. A short lease is not
   * what makes the hand-over fast: closing the leader releases the Lease, and the follower takes it
   * at its next try. A short lease only made the election fragile: with 3 s and 2 s, any stall of
   * the test JVM over 2 s (a loaded 2-core machine stalls it for longer) let the follower take a
   * lease the leader still held, or made the leader give up at its renew deadline; each flip closed
   * the watch loop mid-reconcile and the new leader started over, so the 20 s waits ran out.
   */
  private static WatcherOptions replica(String identity) {
    LeaderElection usual = LeaderElection.of("inplace-system", "inplace-watcher", identity);
    return WatcherHarness.fast().withLeaderElection(
        new LeaderElection(usual.leaseNamespace(), usual.leaseName(), identity,
            usual.leaseDuration(), usual.renewDeadline(), Duration.ofMillis(250)));
  }

  @Test
  void onlyTheLeaseHolderActsAndTheOtherReplicaTakesOverWhenItGoes() {
    UpgradeWatcher a = h.watcher(replica("replica-a"));
    UpgradeWatcher b = h.watcher(replica("replica-b"));
    // One acts, and both have read the Lease and agree who holds it: the follower has competed and
    // stepped back (no fixed sleep to hope it has).
    await().atMost(WatcherHarness.WAIT).until(
        () -> (a.isLeading() || b.isLeading())
            && a.observedLeader().isPresent() && a.observedLeader().equals(b.observedLeader()));
    assertNotEquals(a.isLeading(), b.isLeading(), "exactly one replica acts");
    UpgradeWatcher leader = a.isLeading() ? a : b;
    UpgradeWatcher follower = leader == a ? b : a;
    String holder = h.kube.leases().inNamespace("inplace-system").withName("inplace-watcher").get().getSpec().getHolderIdentity();
    assertEquals(leader == a ? "replica-a" : "replica-b", holder);
    assertEquals(Optional.of(holder), follower.observedLeader(), "the follower knows who acts");

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
