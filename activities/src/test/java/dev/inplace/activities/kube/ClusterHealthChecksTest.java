package dev.inplace.activities.kube;

import static dev.inplace.activities.kube.KubeFixtures.CLUSTER;
import static dev.inplace.activities.kube.NodeActivitiesImplTest.failureOf;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneCheckRequest;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodeActivities.ExpectedNode;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodesRequest;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.api.model.NodeConditionBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatus;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The cluster-wide node checks: several nodes at once, control-plane health, blocking budgets. */
@EnableKubernetesMockClient(crud = true, https = false)
class ClusterHealthChecksTest {
  private static final String OLD = "v1.30.5+k3s1";
  private static final String NEW = "v1.31.2+k3s1";

  KubernetesMockServer server;
  KubernetesClient client;

  private KubeClients clients;
  private TestActivityEnvironment env;
  private NodeActivities activities;
  private final List<List<?>> heartbeats = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
    KubeFixtures.createKubeconfigSecret(client, CLUSTER, KubeFixtures.kubeconfig(server.url("/")));
    clients = new KubeClients(client);
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(new NodeActivitiesImpl(clients, Duration.ofMillis(100)));
    env.setActivityHeartbeatListener(List.class, heartbeats::add);
    activities =
        env.newActivityStub(NodeActivities.class, KubeFixtures.oneAttempt(Duration.ofSeconds(30)));
  }

  @AfterEach
  void tearDown() {
    env.close();
    clients.close();
  }

  // ------------------------------------------------------------------ inspectNodes

  @Test
  void inspectNodesReportsEachNodeInRequestOrderAndListsTheMissingOnes() {
    givenNode(KubeFixtures.node("worker-2", true, OLD));
    givenNode(KubeFixtures.node("worker-1", false, NEW));

    NodesState state =
        activities.inspectNodes(
            new NodesRequest(CLUSTER, List.of("worker-2", "ghost", "worker-1")));

    assertEquals(
        new NodesState(
            List.of(
                new NodeState("worker-2", true, false, OLD, null),
                new NodeState("worker-1", false, false, NEW, null)),
            List.of("ghost")),
        state);
  }

  // ------------------------------------------------------------------ awaitControlPlaneHealthy

  @Test
  void healthyWhenEveryNodeIsReadyAtItsVersionReadyzIsOkAndVotersVote() {
    givenNode(withCondition(KubeFixtures.node("cp-1", true, NEW), voter(true)));
    givenNode(KubeFixtures.node("cp-2", true, NEW)); // no etcd condition: SQLite or external DB
    readyz(200, "ok");

    ControlPlaneHealth health = activities.awaitControlPlaneHealthy(check(true, 5, "cp-1", "cp-2"));

    assertEquals(
        new ControlPlaneHealth(
            true,
            List.of(
                "node cp-1 Ready at " + NEW,
                "node cp-1 EtcdIsVoter=True",
                "node cp-2 Ready at " + NEW,
                "apiserver /readyz ok")),
        health);
    assertTrue(heartbeats.isEmpty(), "healthy at the first look: no wait");
  }

  @Test
  void waitsUntilARestartedServerIsPromotedFromLearnerToVoter() throws Exception {
    givenNode(withCondition(KubeFixtures.node("cp-1", true, NEW), voter(false)));
    readyz(200, "ok");
    CompletableFuture<Void> promotion =
        CompletableFuture.runAsync(
            () -> client.nodes().withName("cp-1").editStatus(n -> withCondition(n, voter(true))),
            CompletableFuture.delayedExecutor(700, TimeUnit.MILLISECONDS));

    ControlPlaneHealth health = activities.awaitControlPlaneHealthy(check(true, 10, "cp-1"));

    promotion.get(5, TimeUnit.SECONDS);
    assertTrue(health.healthy());
    assertFalse(heartbeats.isEmpty(), "the wait heartbeats the problems it still sees");
    assertEquals(
        List.of("node cp-1 is not an etcd voter yet (EtcdIsVoter=False, MemberIsLearner)"),
        heartbeats.get(0));
  }

  @Test
  void learnersDoNotMatterWhenVotersAreNotRequired() {
    givenNode(withCondition(KubeFixtures.node("cp-1", true, NEW), voter(false)));
    readyz(200, "ok");

    ControlPlaneHealth health = activities.awaitControlPlaneHealthy(check(false, 0, "cp-1"));

    assertEquals(List.of("node cp-1 Ready at " + NEW, "apiserver /readyz ok"), health.checked());
  }

  @Test
  void aFailingReadyzIsWaitedOutNotACrash() {
    givenNode(KubeFixtures.node("cp-1", true, NEW));
    server
        .expect()
        .get()
        .withPath("/readyz")
        .andReturn(500, "[-]etcd failed: reason withheld")
        .times(2);
    readyz(200, "ok");

    ControlPlaneHealth health = activities.awaitControlPlaneHealthy(check(true, 10, "cp-1"));

    assertTrue(health.healthy());
    assertFalse(heartbeats.isEmpty()); // later heartbeats are throttled by the SDK
    assertEquals(
        List.of("apiserver /readyz answered HTTP 500: [-]etcd failed: reason withheld"),
        heartbeats.get(0));
  }

  @Test
  void readyzAnsweringSomethingElseThanOkIsAProblem() {
    givenNode(KubeFixtures.node("cp-1", true, NEW));
    readyz(200, "all good, I think");

    ApplicationFailure failure =
        failureOf(() -> activities.awaitControlPlaneHealthy(check(true, 0, "cp-1")));

    assertEquals(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, failure.getType());
    assertTrue(
        failure
            .getOriginalMessage()
            .endsWith("apiserver /readyz answered HTTP 200: all good, I think"),
        failure.getOriginalMessage());
  }

  @Test
  void timeoutIsControlPlaneUnhealthyListingEveryProblem() {
    givenNode(KubeFixtures.node("cp-1", true, OLD));
    givenNode(KubeFixtures.node("cp-2", false, NEW));
    readyz(503, "[-]etcd failed: reason withheld");

    ApplicationFailure failure =
        failureOf(
            () -> activities.awaitControlPlaneHealthy(check(true, 1, "cp-1", "cp-2", "cp-3")));

    assertEquals(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, failure.getType());
    assertTrue(failure.isNonRetryable());
    String message = failure.getOriginalMessage();
    assertTrue(
        message.startsWith(
            "The control plane of cluster capi-system/c1 was not healthy within 1s: "),
        message);
    assertTrue(message.contains("node cp-1 runs kubelet " + OLD + ", expected " + NEW), message);
    assertTrue(message.contains("node cp-2 is not Ready"), message);
    assertTrue(message.contains("node cp-3 is not registered"), message);
    assertTrue(
        message.endsWith("; apiserver /readyz answered HTTP 503: [-]etcd failed: reason withheld"),
        message);
  }

  @Test
  void expectedNodesNeedANameAndAVersion() {
    ApplicationFailure failure =
        failureOf(
            () ->
                activities.awaitControlPlaneHealthy(
                    new ControlPlaneCheckRequest(
                        CLUSTER, List.of(new ExpectedNode("cp-1", "")), true, 5)));

    assertEquals(UpgradeFailures.INVALID_REQUEST, failure.getType());
  }

  // ------------------------------------------------------------------ listBlockingBudgets

  @Test
  void listsBudgetsThatAllowNoDisruptionWhileProtectingPods() {
    budget("shop", "web", status(0, 2));
    budget("shop", "cache", status(1, 3));
    budget("kube-system", "coredns", status(0, 1));
    budget("batch", "idle", status(0, 0)); // protects nothing
    budget("batch", "new", null); // not computed yet

    BudgetReport report = activities.listBlockingBudgets(CLUSTER);

    assertEquals(
        new BudgetReport(
            List.of(
                new BlockingBudget("kube-system", "coredns", 0, 1),
                new BlockingBudget("shop", "web", 0, 2))),
        report);
  }

  @Test
  void noBudgetsNothingBlocks() {
    assertEquals(new BudgetReport(List.of()), activities.listBlockingBudgets(CLUSTER));
  }

  // ------------------------------------------------------------------ helpers

  private void givenNode(Node node) {
    client.nodes().resource(node).create();
  }

  private void readyz(int code, String body) {
    server.expect().get().withPath("/readyz").andReturn(code, body).always();
  }

  private static ControlPlaneCheckRequest check(
      boolean voters, long timeoutSeconds, String... nodes) {
    return new ControlPlaneCheckRequest(
        CLUSTER,
        java.util.Arrays.stream(nodes).map(n -> new ExpectedNode(n, NEW)).toList(),
        voters,
        timeoutSeconds);
  }

  private static NodeCondition voter(boolean voting) {
    return voting
        ? new NodeConditionBuilder()
            .withType("EtcdIsVoter")
            .withStatus("True")
            .withReason("MemberNotLearner")
            .withMessage("Node is a voting member of the etcd cluster")
            .build()
        : new NodeConditionBuilder()
            .withType("EtcdIsVoter")
            .withStatus("False")
            .withReason("MemberIsLearner")
            .withMessage("Node has not been promoted to voting member of the etcd cluster")
            .build();
  }

  private static Node withCondition(Node node, NodeCondition condition) {
    node.getStatus().getConditions().removeIf(c -> c.getType().equals(condition.getType()));
    node.getStatus().getConditions().add(condition);
    return node;
  }

  private void budget(String namespace, String name, PodDisruptionBudgetStatus status) {
    client
        .policy()
        .v1()
        .podDisruptionBudget()
        .inNamespace(namespace)
        .resource(
            new PodDisruptionBudgetBuilder()
                .withNewMetadata()
                .withNamespace(namespace)
                .withName(name)
                .endMetadata()
                .withNewSpec()
                .withMinAvailable(new IntOrString(1))
                .withNewSelector()
                .addToMatchLabels("app", name)
                .endSelector()
                .endSpec()
                .build())
        .create();
    if (status != null) {
      client
          .policy()
          .v1()
          .podDisruptionBudget()
          .inNamespace(namespace)
          .withName(name)
          .editStatus(
              b -> {
                b.setStatus(status);
                return b;
              });
    }
  }

  private static PodDisruptionBudgetStatus status(int disruptionsAllowed, int expectedPods) {
    return new PodDisruptionBudgetStatusBuilder()
        .withDisruptionsAllowed(disruptionsAllowed)
        .withExpectedPods(expectedPods)
        .withCurrentHealthy(expectedPods)
        .withDesiredHealthy(Math.max(0, expectedPods - disruptionsAllowed))
        .build();
  }
}
