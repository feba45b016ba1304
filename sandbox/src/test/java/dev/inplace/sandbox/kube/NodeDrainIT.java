package dev.inplace.sandbox.kube;

import static dev.inplace.sandbox.kube.KubeObjects.NS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.kube.KubeClients;
import dev.inplace.activities.kube.NodeActivitiesImpl;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.CordonRequest;
import dev.inplace.workflows.api.NodeActivities.DrainProgress;
import dev.inplace.workflows.api.NodeActivities.DrainRequest;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.PendingPod;
import dev.inplace.workflows.api.NodeActivities.UncordonRequest;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link NodeActivitiesImpl#drainNode} end to end against {@link SandboxApiServer}, which plays
 * both the management cluster (the kubeconfig Secret) and the workload cluster (nodes, pods,
 * budgets, evictions).
 */
class NodeDrainIT {
  private static final ClusterRef CLUSTER = new ClusterRef("capi-system", "c1");
  private static final String OWNER = "node-upgrade/capi-system/m1/v1.31.2";

  private SandboxApiServer server;
  private KubernetesClient client;
  private ReplicaSetSimulator replicaSets;
  private KubeClients clients;
  private TestActivityEnvironment env;
  private NodeActivities activities;
  private final List<DrainProgress> heartbeats = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() {
    server = SandboxApiServer.start();
    client = server.client();
    client.secrets().inNamespace(CLUSTER.namespace()).resource(
            new SecretBuilder()
                .withNewMetadata().withNamespace(CLUSTER.namespace()).withName("c1-kubeconfig").endMetadata()
                .withType("cluster.x-k8s.io/secret")
                .addToData("value", Base64.getEncoder().encodeToString(server.kubeconfig().getBytes(StandardCharsets.UTF_8)))
                .build())
        .create();
    for (String node : List.of("w1", "w2")) {
      client.nodes().resource(KubeObjects.readyNode(node)).create();
    }
    replicaSets = ReplicaSetSimulator.start(client, Duration.ofMillis(300));
    clients = new KubeClients(client);
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(new NodeActivitiesImpl(clients, Duration.ofMillis(200)));
    env.setActivityHeartbeatListener(DrainProgress.class, heartbeats::add);
    activities =
        env.newActivityStub(
            NodeActivities.class,
            ActivityOptions.newBuilder()
                .setStartToCloseTimeout(Duration.ofSeconds(60))
                .setHeartbeatTimeout(Duration.ofSeconds(30))
                .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
                .build());
  }

  @AfterEach
  void stop() {
    env.close();
    clients.close();
    replicaSets.close();
    server.close();
  }

  private void create(Pod pod) {
    client.pods().inNamespace(pod.getMetadata().getNamespace()).resource(pod).create();
  }

  private Pod pod(String name) {
    return client.pods().inNamespace(NS).withName(name).get();
  }

  private List<Pod> podsOn(String node) {
    return client.pods().inAnyNamespace().list().getItems().stream()
        .filter(p -> node.equals(p.getSpec().getNodeName()))
        .toList();
  }

  private DrainResult drain(String node, DrainOptions options) {
    activities.cordonNode(new CordonRequest(CLUSTER, node, OWNER));
    return activities.drainNode(new DrainRequest(CLUSTER, node, options));
  }

  private static DrainOptions options(long timeoutSeconds, PdbBlockedAction onBlocked) {
    return new DrainOptions(timeoutSeconds, false, false, onBlocked, false);
  }

  private static ApplicationFailure failureOf(org.junit.jupiter.api.function.Executable call) {
    ActivityFailure failure = assertThrows(ActivityFailure.class, call);
    return assertInstanceOf(ApplicationFailure.class, failure.getCause());
  }

  @Test
  void daemonSetAndMirrorPodsAreSkippedAndFinishedPodsDeleted() {
    create(KubeObjects.ownedBy(KubeObjects.runningPod("agent-w1", "w1"), "DaemonSet", "agent").build());
    create(
        KubeObjects.ownedBy(KubeObjects.runningPod("etcd-w1", "w1"), "Node", "w1")
            .editMetadata().addToAnnotations("kubernetes.io/config.mirror", "hash").endMetadata()
            .build());
    create(KubeObjects.runningPod("job-done", "w1").editStatus().withPhase("Succeeded").endStatus().build());
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));

    DrainResult result = drain("w1", options(10, PdbBlockedAction.FAIL));

    assertEquals(1, result.evicted());
    assertEquals(1, result.deleted());
    assertEquals(1, result.skippedDaemonSet());
    assertEquals(1, result.skippedMirror());
    assertEquals(
        List.of("agent-w1", "etcd-w1"),
        podsOn("w1").stream().map(p -> p.getMetadata().getName()).sorted().toList());
  }

  @Test
  void twoReplicasBehindMinAvailableOneDrainOneNodeAfterTheOther() {
    client.apps().replicaSets().inNamespace(NS).resource(KubeObjects.replicaSet("web-rs", "web", 2)).create();
    create(KubeObjects.replicaPod("web-a", "web-rs", "web", "w1"));
    create(KubeObjects.replicaPod("web-b", "web-rs", "web", "w2"));
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.minAvailable("web-pdb", "web", new IntOrString(1))).create();

    DrainResult first = drain("w1", options(20, PdbBlockedAction.FAIL));
    // w1 is still cordoned, so web-a's replacement lands on w2.
    await().atMost(Duration.ofSeconds(5)).until(() -> podsOn("w2").size() == 2);
    activities.uncordonNode(new UncordonRequest(CLUSTER, "w1", OWNER));
    heartbeats.clear();
    DrainResult second = drain("w2", options(20, PdbBlockedAction.FAIL));

    assertEquals(1, first.evicted());
    assertEquals(2, second.evicted(), "web-b and the replacement of web-a both left w2");
    assertEquals(0, second.deleted());
    assertTrue(podsOn("w2").isEmpty());
    await().atMost(Duration.ofSeconds(5)).until(() -> podsOn("w1").size() == 2);
    assertTrue(
        heartbeats.stream()
            .flatMap(h -> h.remaining().stream())
            .anyMatch(p -> "web-pdb".equals(p.blockedBy())),
        "the second drain waited for the budget and said so: " + heartbeats);
  }

  /**
   * A drain refused by a budget tries again as soon as a pod of the budget changes (here the
   * replacement of a replica evicted by another drain turning Ready), not at its next look: the
   * looks here are 30 s apart, the replacement comes 300 ms after the first eviction.
   */
  @Test
  void aDrainWaitingOnABudgetEvictsWhenTheReplacementIsReadyNotAtItsNextLook() {
    env.close();
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(
        new NodeActivitiesImpl(clients, Duration.ofSeconds(30), Duration.ofSeconds(30)));
    env.setActivityHeartbeatListener(DrainProgress.class, heartbeats::add);
    NodeActivities slowLooks = env.newActivityStub(NodeActivities.class, ActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofSeconds(90))
        .setHeartbeatTimeout(Duration.ofSeconds(60))
        .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
        .build());
    client.nodes().resource(KubeObjects.readyNode("w3")).create();
    client.apps().replicaSets().inNamespace(NS).resource(KubeObjects.replicaSet("web-rs", "web", 2)).create();
    create(KubeObjects.replicaPod("web-a", "web-rs", "web", "w1"));
    create(KubeObjects.replicaPod("web-b", "web-rs", "web", "w2"));
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.minAvailable("web-pdb", "web", new IntOrString(1))).create();
    slowLooks.cordonNode(new CordonRequest(CLUSTER, "w1", OWNER));
    slowLooks.cordonNode(new CordonRequest(CLUSTER, "w2", OWNER));
    // Another drain took web-b: until its replacement (on w3) is Ready, the budget refuses web-a.
    assertTrue(client.pods().inNamespace(NS).withName("web-b").evict());

    long started = System.nanoTime();
    DrainResult result = slowLooks.drainNode(new DrainRequest(CLUSTER, "w1", options(60, PdbBlockedAction.FAIL)));
    long tookMillis = Duration.ofNanos(System.nanoTime() - started).toMillis();

    assertEquals(1, result.evicted());
    assertTrue(podsOn("w1").isEmpty());
    assertTrue(
        heartbeats.stream().flatMap(h -> h.remaining().stream()).anyMatch(p -> "web-pdb".equals(p.blockedBy())),
        "the budget refused the first eviction: " + heartbeats);
    // The next look would be 30 s after the refusal: a third of that holds on any loaded machine.
    assertTrue(tookMillis < 10_000, "the drain took " + tookMillis + " ms: it waited for its next look");
  }

  @Test
  void budgetWithMaxUnavailableZeroFailsTheDrainNamingBudgetAndPod() {
    create(KubeObjects.replicaPod("ledger-1", "ledger-rs", "ledger", "w1"));
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.maxUnavailable("ledger-pdb", "ledger", new IntOrString(0))).create();

    ApplicationFailure failure = failureOf(() -> drain("w1", options(1, PdbBlockedAction.FAIL)));

    assertEquals(UpgradeFailures.DRAIN_BLOCKED, failure.getType());
    assertTrue(failure.isNonRetryable());
    assertTrue(failure.getOriginalMessage().contains("shop/ledger-1"), failure.getOriginalMessage());
    assertTrue(failure.getOriginalMessage().contains("ledger-pdb"), failure.getOriginalMessage());
    DrainProgress details = failure.getDetails().get(0, DrainProgress.class);
    assertEquals(List.of(new PendingPod(NS, "ledger-1", "ledger-pdb")), details.remaining());
    assertNotNull(pod("ledger-1"), "a blocked pod stays");
  }

  @Test
  void onBlockedDeleteDeletesTheBlockedPodsAtTheTimeout() {
    create(KubeObjects.replicaPod("ledger-1", "ledger-rs", "ledger", "w1"));
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.maxUnavailable("ledger-pdb", "ledger", new IntOrString(0))).create();

    DrainResult result = drain("w1", options(1, PdbBlockedAction.DELETE));

    assertEquals(0, result.evicted());
    assertEquals(1, result.deleted());
    assertTrue(result.waitedSeconds() >= 1);
    assertNull(pod("ledger-1"));
  }

  @Test
  void emptyDirPodWithoutPermissionIsRefusedBeforeAnythingIsEvicted() {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));
    create(
        KubeObjects.ownedBy(KubeObjects.runningPod("cache-1", "w1"), "ReplicaSet", "cache-rs")
            .editSpec().addNewVolume().withName("scratch").withNewEmptyDir().endEmptyDir().endVolume().endSpec()
            .build());

    ApplicationFailure failure = failureOf(() -> drain("w1", options(10, PdbBlockedAction.FAIL)));

    assertEquals(UpgradeFailures.DRAIN_BLOCKED, failure.getType());
    assertTrue(failure.getOriginalMessage().contains("shop/cache-1 (has emptyDir data"), failure.getOriginalMessage());
    assertNotNull(pod("web-1"), "nothing was evicted");
    assertNotNull(pod("cache-1"));
  }

  @Test
  void retriedDrainContinuesTheEvictedCountFromItsHeartbeat() {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));
    activities.cordonNode(new CordonRequest(CLUSTER, "w1", OWNER));
    env.setHeartbeatDetails(new DrainProgress(List.of(), 3)); // as left by a failed attempt

    DrainResult result =
        activities.drainNode(new DrainRequest(CLUSTER, "w1", options(10, PdbBlockedAction.FAIL)));

    assertEquals(4, result.evicted());
  }

  @Test
  void skipReturnsAtOnceAndTouchesNoPod() {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));

    DrainResult result =
        activities.drainNode(
            new DrainRequest(CLUSTER, "w1", new DrainOptions(10, false, false, PdbBlockedAction.FAIL, true)));

    assertEquals(new DrainResult(0, 0, 0, 0, 0), result);
    assertNotNull(pod("web-1"));
  }
}
