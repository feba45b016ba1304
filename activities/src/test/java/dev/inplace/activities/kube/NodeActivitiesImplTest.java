package dev.inplace.activities.kube;

import static dev.inplace.activities.kube.KubeFixtures.CLUSTER;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.AwaitNodeRequest;
import dev.inplace.workflows.api.NodeActivities.CordonRequest;
import dev.inplace.workflows.api.NodeActivities.CordonResult;
import dev.inplace.workflows.api.NodeActivities.NodeRequest;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.UncordonRequest;
import dev.inplace.workflows.api.NodeActivities.UncordonResult;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

@EnableKubernetesMockClient(crud = true, https = false)
class NodeActivitiesImplTest {
  private static final String OWNER = "node-upgrade/capi-system/m1/v1.31.2";

  KubernetesMockServer server;
  KubernetesClient client;

  private KubeClients clients;
  private TestActivityEnvironment env;
  private NodeActivities activities;

  @BeforeEach
  void setUp() {
    // The mock is both the management cluster (Secret) and the workload cluster (nodes).
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, KubeFixtures.kubeconfig(server.url("/")));
    clients = new KubeClients(client);
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(
        new NodeActivitiesImpl(clients, Duration.ofMillis(100)));
    activities =
        env.newActivityStub(NodeActivities.class, KubeFixtures.oneAttempt(Duration.ofSeconds(30)));
  }

  @AfterEach
  void tearDown() {
    env.close();
    clients.close();
  }

  private void givenNode(Node node) {
    client.nodes().resource(node).create();
  }

  private Node node(String name) {
    return client.nodes().withName(name).get();
  }

  @Test
  void inspectReportsReadinessSchedulabilityVersionAndCordonOwner() {
    Node n = KubeFixtures.node("w1", true, "v1.30.5+k3s1");
    n.getSpec().setUnschedulable(true);
    n.getMetadata().getAnnotations().put(NodeActivities.CORDONED_BY_ANNOTATION, "someone");
    givenNode(n);

    NodeState state = activities.inspectNode(new NodeRequest(CLUSTER, "w1"));

    assertEquals(new NodeState("w1", true, true, "v1.30.5+k3s1", "someone"), state);
  }

  @Test
  void theDrainOfAClustersOnlyNodeEvictsNothing() {
    givenNode(KubeFixtures.node("cp-0", true, "v1.30.5+k3s1"));
    client.pods().inNamespace("default").resource(new io.fabric8.kubernetes.api.model.PodBuilder()
        .withNewMetadata().withName("web-1").withNamespace("default")
        .addNewOwnerReference().withApiVersion("apps/v1").withKind("ReplicaSet").withName("web").withUid("u1")
        .withController(true).endOwnerReference().endMetadata()
        .withNewSpec().withNodeName("cp-0").endSpec().build()).create();

    NodeActivities.DrainResult result = activities.drainNode(
        new NodeActivities.DrainRequest(CLUSTER, "cp-0", dev.inplace.workflows.api.DrainOptions.defaults()));

    assertEquals(new NodeActivities.DrainResult(0, 0, 0, 0, 0), result);
    assertTrue(client.pods().inNamespace("default").withName("web-1").get() != null,
        "nowhere to evict to: the pod stays and restarts with the node");
  }

  /**
   * Regression (chaos campaign, 30 nodes, seed 1): a drain beat only once per round, after the
   * workload client and its first API calls; on a worker just started on a loaded machine that took
   * longer than the drain's 10 s heartbeat timeout, and its last attempt timed out. It now beats from
   * a side thread from the start. Here the kubeconfig Secret takes 5 s to read and the drain then has
   * nothing to evict (it never reaches a beat of its own).
   */
  @Test
  void aDrainBeatsWhileItsFirstCallsAreSlowNotOnlyOncePerRound() {
    env.close();
    clients.close();
    dev.inplace.activities.support.SecretSource secrets =
        new dev.inplace.activities.support.KubernetesSecretSource(client);
    clients = new KubeClients(client, (namespace, name) -> {
      try {
        Thread.sleep(5_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return secrets.read(namespace, name);
    });
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(new NodeActivitiesImpl(clients, Duration.ofMillis(100)));
    List<Object> beats = new java.util.concurrent.CopyOnWriteArrayList<>();
    env.setActivityHeartbeatListener(Object.class, beats::add);
    NodeActivities slow = env.newActivityStub(NodeActivities.class, KubeFixtures.oneAttempt(Duration.ofSeconds(30)));
    givenNode(KubeFixtures.node("w1", true, "v1.30.5+k3s1"));
    givenNode(KubeFixtures.node("w2", true, "v1.30.5+k3s1"));

    NodeActivities.DrainResult result = slow.drainNode(
        new NodeActivities.DrainRequest(CLUSTER, "w1", dev.inplace.workflows.api.DrainOptions.defaults()));

    assertEquals(0, result.evicted());
    assertFalse(beats.isEmpty(), "no beat while the Secret was read");
  }

  @Test
  void cordonMarksNodeUnschedulableWithOwnerAndIsIdempotent() {
    givenNode(KubeFixtures.node("w1", true, "v1.30.5"));

    CordonResult first = activities.cordonNode(new CordonRequest(CLUSTER, "w1", OWNER));
    String versionAfterFirst = node("w1").getMetadata().getResourceVersion();
    CordonResult second = activities.cordonNode(new CordonRequest(CLUSTER, "w1", OWNER));

    assertEquals(new CordonResult(true, false), first);
    assertEquals(new CordonResult(true, true), second);
    Node stored = node("w1");
    assertTrue(stored.getSpec().getUnschedulable());
    assertEquals(OWNER, stored.getMetadata().getAnnotations().get(NodeActivities.CORDONED_BY_ANNOTATION));
    assertEquals(versionAfterFirst, stored.getMetadata().getResourceVersion(), "second cordon wrote");
  }

  @Test
  void nodeCordonedBySomeoneElseIsLeftAloneAndNeverUncordonedByUs() {
    Node n = KubeFixtures.node("w1", true, "v1.30.5");
    n.getSpec().setUnschedulable(true); // kubectl cordon: no owner annotation
    givenNode(n);

    CordonResult cordon = activities.cordonNode(new CordonRequest(CLUSTER, "w1", OWNER));
    UncordonResult uncordon = activities.uncordonNode(new UncordonRequest(CLUSTER, "w1", OWNER));

    assertEquals(new CordonResult(false, true), cordon);
    assertEquals(new UncordonResult(false, "not cordoned by " + OWNER), uncordon);
    Node stored = node("w1");
    assertTrue(stored.getSpec().getUnschedulable());
    assertTrue(
        stored.getMetadata().getAnnotations() == null
            || !stored.getMetadata().getAnnotations().containsKey(NodeActivities.CORDONED_BY_ANNOTATION));
  }

  @Test
  void uncordonOnlyWithMatchingOwnerRemovesAnnotationAndIsIdempotent() {
    givenNode(KubeFixtures.node("w1", true, "v1.30.5"));
    activities.cordonNode(new CordonRequest(CLUSTER, "w1", OWNER));

    UncordonResult otherOwner =
        activities.uncordonNode(new UncordonRequest(CLUSTER, "w1", "node-upgrade/other"));
    assertFalse(otherOwner.uncordoned());
    assertTrue(node("w1").getSpec().getUnschedulable());

    UncordonResult ours = activities.uncordonNode(new UncordonRequest(CLUSTER, "w1", OWNER));
    UncordonResult again = activities.uncordonNode(new UncordonRequest(CLUSTER, "w1", OWNER));

    assertTrue(ours.uncordoned());
    assertEquals(new UncordonResult(false, "already schedulable"), again);
    Node stored = node("w1");
    assertFalse(Boolean.TRUE.equals(stored.getSpec().getUnschedulable()));
    // A real API server drops a key merge-patched to null; fabric8's mock keeps it as null.
    assertNull(stored.getMetadata().getAnnotations().get(NodeActivities.CORDONED_BY_ANNOTATION));
  }

  @Test
  void awaitSucceedsWhenNodeReportsTargetVersionDuringTheWait() throws Exception {
    givenNode(KubeFixtures.node("w1", false, "v1.30.5+k3s1"));
    List<NodeState> heartbeats = new ArrayList<>();
    env.setActivityHeartbeatListener(NodeState.class, heartbeats::add);
    CompletableFuture<Void> upgrade =
        CompletableFuture.runAsync(
            () ->
                client
                    .nodes()
                    .withName("w1")
                    .editStatus(
                        n -> {
                          n.getStatus().getNodeInfo().setKubeletVersion("v1.31.2+k3s1");
                          n.getStatus().getConditions().get(0).setStatus("True");
                          return n;
                        }),
            CompletableFuture.delayedExecutor(700, TimeUnit.MILLISECONDS));

    NodeState state =
        activities.awaitNodeVersion(new AwaitNodeRequest(CLUSTER, "w1", "v1.31.2+k3s1", 10));

    upgrade.get(5, TimeUnit.SECONDS);
    assertEquals(new NodeState("w1", true, false, "v1.31.2+k3s1", null), state);
    assertFalse(heartbeats.isEmpty(), "the wait heartbeats its observations");
    assertEquals("v1.30.5+k3s1", heartbeats.get(0).kubeletVersion());
  }

  /**
   * The wait watches the Node, so it sees the change at once instead of at its next look. Here the
   * looks are 60 s apart from the first and the Node turns Ready 1 s after the first look: polling
   * alone would see it 59 s after the change.
   */
  @Test
  void awaitSeesTheNodeTurnReadyWhenItChangesNotAtItsNextLook() throws Exception {
    env.close();
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(
        new NodeActivitiesImpl(clients, Duration.ofSeconds(60), Duration.ofSeconds(60)));
    NodeActivities slowLooks =
        env.newActivityStub(NodeActivities.class, KubeFixtures.oneAttempt(Duration.ofSeconds(120)));
    givenNode(KubeFixtures.node("w1", false, "v1.30.5+k3s1"));
    CountDownLatch firstLook = new CountDownLatch(1);
    env.setActivityHeartbeatListener(NodeState.class, seen -> {
      if (seen != null) {
        firstLook.countDown();
      }
    });
    CompletableFuture<Long> turnedReady =
        CompletableFuture.supplyAsync(
            () -> {
              try {
                assertTrue(firstLook.await(30, TimeUnit.SECONDS), "the wait never looked");
                Thread.sleep(1_000);
              } catch (InterruptedException e) {
                throw new IllegalStateException(e);
              }
              long at = System.nanoTime();
              client.nodes().withName("w1").editStatus(n -> {
                n.getStatus().getNodeInfo().setKubeletVersion("v1.31.2+k3s1");
                n.getStatus().getConditions().get(0).setStatus("True");
                return n;
              });
              return at;
            });

    NodeState state =
        slowLooks.awaitNodeVersion(new AwaitNodeRequest(CLUSTER, "w1", "v1.31.2+k3s1", 90));
    long returnedAt = System.nanoTime();

    assertEquals(new NodeState("w1", true, false, "v1.31.2+k3s1", null), state);
    long afterChange = TimeUnit.NANOSECONDS.toMillis(returnedAt - turnedReady.get(5, TimeUnit.SECONDS));
    // The next look is 59 s after the change: a bound of a third of that holds on any loaded machine.
    assertTrue(afterChange < 20_000,
        "returned " + afterChange + " ms after the Node turned Ready: the next look, not the change");
  }

  /**
   * An API server that refuses the watch (no {@code watch} verb, a restarting API server, a mock
   * without watches) leaves the wait polling as before. This workload API server has expectations
   * only: GETs of the Node (not Ready, then Ready at the target); the watch gets a 404.
   */
  @Test
  void awaitStillPollsWhenTheApiServerRefusesTheWatch() throws Exception {
    KubernetesMockServer workload = new KubernetesMockServer(false);
    workload.init();
    try {
      workload.expect().get().withPath("/api/v1/nodes/w1")
          .andReturn(200, KubeFixtures.node("w1", false, "v1.30.5+k3s1")).times(3);
      workload.expect().get().withPath("/api/v1/nodes/w1")
          .andReturn(200, KubeFixtures.node("w1", true, "v1.31.2+k3s1")).always();
      KubeFixtures.createKubeconfigSecret(client, CLUSTER, KubeFixtures.kubeconfig(workload.url("/")));

      NodeState state =
          activities.awaitNodeVersion(new AwaitNodeRequest(CLUSTER, "w1", "v1.31.2+k3s1", 10));

      assertEquals(new NodeState("w1", true, false, "v1.31.2+k3s1", null), state);
      List<String> asked = new ArrayList<>();
      for (var r = workload.takeRequest(1, TimeUnit.SECONDS); r != null;
          r = workload.takeRequest(1, TimeUnit.SECONDS)) {
        asked.add(r.getPath());
      }
      assertTrue(asked.stream().anyMatch(p -> p.contains("watch=true")),
          "the wait asked for a watch (and got 404): " + asked);
      assertTrue(asked.stream().filter("/api/v1/nodes/w1"::equals).count() >= 4,
          "it kept looking: " + asked);
    } finally {
      workload.destroy();
    }
  }

  @Test
  void awaitTimesOutWithVerifyTimeoutNamingTheLastObservation() {
    givenNode(KubeFixtures.node("w1", true, "v1.30.5+k3s1"));

    ApplicationFailure failure =
        failureOf(
            () -> activities.awaitNodeVersion(new AwaitNodeRequest(CLUSTER, "w1", "v1.31.2+k3s1", 1)));

    assertEquals(UpgradeFailures.VERIFY_TIMEOUT, failure.getType());
    assertTrue(failure.isNonRetryable());
    assertTrue(failure.getOriginalMessage().contains("v1.30.5+k3s1"), failure.getOriginalMessage());
  }

  @Test
  void missingNodeFailsWithNodeNotFound() {
    ApplicationFailure inspect =
        failureOf(() -> activities.inspectNode(new NodeRequest(CLUSTER, "ghost")));
    ApplicationFailure cordon =
        failureOf(() -> activities.cordonNode(new CordonRequest(CLUSTER, "ghost", OWNER)));

    assertEquals(UpgradeFailures.NODE_NOT_FOUND, inspect.getType());
    assertEquals(UpgradeFailures.NODE_NOT_FOUND, cordon.getType());
    assertTrue(inspect.isNonRetryable());
    assertTrue(inspect.getOriginalMessage().contains("ghost"));
  }

  @Test
  void missingKubeconfigSecretFailsWithSecretNotFound() {
    client.secrets().inNamespace(CLUSTER.namespace()).withName("c1-kubeconfig").delete();
    clients.close();
    clients = new KubeClients(client);
    env.close();
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(new NodeActivitiesImpl(clients));
    activities =
        env.newActivityStub(NodeActivities.class, KubeFixtures.oneAttempt(Duration.ofSeconds(30)));

    ApplicationFailure failure =
        failureOf(() -> activities.inspectNode(new NodeRequest(CLUSTER, "w1")));

    assertEquals(UpgradeFailures.SECRET_NOT_FOUND, failure.getType());
    assertTrue(failure.getOriginalMessage().contains("capi-system/c1-kubeconfig"));
  }

  static ApplicationFailure failureOf(Executable call) {
    ActivityFailure failure = assertThrows(ActivityFailure.class, call);
    ApplicationFailure cause = assertInstanceOf(ApplicationFailure.class, failure.getCause());
    assertNull(cause.getCause(), "no library exception leaks through");
    return cause;
  }
}
