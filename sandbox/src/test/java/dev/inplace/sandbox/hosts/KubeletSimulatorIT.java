package dev.inplace.sandbox.hosts;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.inplace.sandbox.faults.FaultInjector;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.UpgradeStep;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class KubeletSimulatorIT {
  private static final String V1 = "v1.30.4+k3s1";
  private static final String V2 = "v1.30.5+k3s1";
  private static final String V3 = "v1.31.2+k3s1";
  private static final Duration STARTUP = Duration.ofMillis(500);
  // fabric8's mock server logs every request through java.util.logging; keep the build log readable
  private static final java.util.logging.Logger MOCK_LOG =
      java.util.logging.Logger.getLogger("io.fabric8.mockwebserver");

  static {
    MOCK_LOG.setLevel(java.util.logging.Level.WARNING);
  }

  @TempDir Path estate;
  private KubernetesMockServer server;
  private KubernetesClient client;
  private FakeReleases releases;
  private SandboxHosts hosts;
  private SandboxHost worker;
  private KubeletSimulator kubelet;

  @BeforeEach
  void setUp() {
    server =
        new KubernetesMockServer(
            new Context(),
            new MockWebServer(),
            new HashMap<>(),
            new KubernetesCrudDispatcher(),
            false);
    server.init();
    client = server.createClient();
    releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small());
    List.of(V1, V2, V3).forEach(releases::add);
    hosts = SandboxHosts.open(estate, new SandboxHosts.Settings("inplace", 0, 80));
    worker = hosts.provision("worker-1", NodeRole.WORKER, V1, releases);
    createNode();
  }

  private void createNode() {
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName("worker-1").endMetadata().build())
        .create();
  }

  @AfterEach
  void tearDown() {
    if (kubelet != null) {
      kubelet.close();
    }
    hosts.close();
    client.close();
    server.destroy();
  }

  @Test
  void reportsTheVersionOfTheBinaryActuallyInstalledAfterARestart() throws Exception {
    kubelet = start();
    assertEventually(true, V1);

    install(V2);
    // a swapped binary changes nothing until the service restarts
    Thread.sleep(3 * STARTUP.toMillis());
    assertEquals(V1, kubeletVersion());

    assertEquals(0, systemctl("restart", "k3s-agent").exitValue());
    await().atMost(Duration.ofSeconds(5)).pollInterval(Duration.ofMillis(20)).until(() -> !ready());
    assertEventually(true, V2);
  }

  @Test
  void verifyFaultKeepsTheNodeNotReadyWhileItRunsTheTargetVersion() throws Exception {
    new FaultInjector(estate.resolve("hosts")).arm("worker-1", UpgradeStep.VERIFY, V3);
    kubelet = start();
    assertEventually(true, V1);

    install(V3);
    assertEquals(0, systemctl("restart", "k3s-agent").exitValue());
    await().atMost(Duration.ofSeconds(5)).until(() -> !ready());
    Thread.sleep(4 * STARTUP.toMillis());
    assertEquals(false, ready());
    assertEquals(V1, kubeletVersion());

    // rollback to the old version: Ready again, at the old version
    install(V1);
    assertEquals(0, systemctl("restart", "k3s-agent").exitValue());
    assertEventually(true, V1);
  }

  @Test
  void clearingTheVerifyFaultLetsTheStuckNodeBecomeReady() throws Exception {
    hosts.faults().arm("worker-1", UpgradeStep.VERIFY, V2);
    kubelet = start();
    install(V2);
    assertEquals(0, systemctl("restart", "k3s-agent").exitValue());
    await().atMost(Duration.ofSeconds(5)).until(() -> !ready());
    Thread.sleep(3 * STARTUP.toMillis());
    assertEquals(false, ready());

    hosts.faults().clear("worker-1", UpgradeStep.VERIFY);
    assertEventually(true, V2);
  }

  @Test
  void publishesOnceTheNodeIsCreatedAfterTheSimulatorStarted() {
    client.nodes().withName("worker-1").delete();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> client.nodes().withName("worker-1").get() == null);
    kubelet = start();
    createNode();
    assertEventually(true, V1);
  }

  @Test
  void aNodeAddedAfterTheStartIsReportedAtItsInstalledVersionAndFollowsItsRestarts() throws Exception {
    kubelet = KubeletSimulator.start(client, List.of(), new KubeletSimulator.Settings(STARTUP, Duration.ofMillis(50)));
    Thread.sleep(3 * STARTUP.toMillis());
    assertEquals(null, node().getStatus() == null ? null : node().getStatus().getNodeInfo(), "not simulated yet");

    kubelet.add(worker.simulatedNode());
    kubelet.add(worker.simulatedNode()); // a second add of the same node changes nothing
    assertEventually(true, V1);
    install(V2);
    assertEquals(0, systemctl("restart", "k3s-agent").exitValue());
    assertEventually(true, V2);
    assertEquals(2, kubelet.binaryStarts().size(), "the start at add and the restart: " + kubelet.binaryStarts());
  }

  @Test
  void failedServiceMakesTheNodeNotReady() throws Exception {
    kubelet = start();
    assertEventually(true, V1);
    hosts.faults().arm("worker-1", UpgradeStep.RESTART, V2);
    install(V2);
    assertEquals(1, systemctl("restart", "k3s-agent").exitValue());
    await().atMost(Duration.ofSeconds(5)).until(() -> !ready());
    assertEquals("service k3s-agent is failed", readyCondition().getMessage());
  }

  @Test
  void serverIsAnEtcdLearnerFromARestartUntilReadyThenAVoter() throws Exception {
    SandboxHost cp = hosts.provision("cp-1", NodeRole.CONTROL_PLANE, V1, releases);
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName("cp-1").endMetadata().build())
        .create();
    kubelet = start();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertEquals("True", etcdVoter("cp-1").getStatus()));
    assertEquals("MemberNotLearner", etcdVoter("cp-1").getReason());
    assertEquals(null, etcdVoter("worker-1"), "agents have no etcd member");

    assertEquals(0, systemctl(cp, "restart", "k3s").exitValue());
    await()
        .atMost(Duration.ofSeconds(5))
        .pollInterval(Duration.ofMillis(20))
        .untilAsserted(
            () -> {
              Node node = client.nodes().withName("cp-1").get();
              NodeCondition learner = condition(node, KubeletSimulator.ETCD_VOTER_CONDITION);
              assertEquals("False", learner.getStatus());
              assertEquals("MemberIsLearner", learner.getReason());
              assertEquals(
                  "Node has not been promoted to voting member of the etcd cluster",
                  learner.getMessage());
              assertEquals("False", condition(node, "Ready").getStatus(), "learner while NotReady");
            });

    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .untilAsserted(
            () -> {
              assertEquals(true, ready("cp-1"));
              assertEquals("True", etcdVoter("cp-1").getStatus());
            });
  }

  private KubeletSimulator start() {
    return KubeletSimulator.start(
        client,
        hosts.simulatedNodes(),
        new KubeletSimulator.Settings(STARTUP, Duration.ofMillis(50)));
  }

  private void install(String version) throws IOException {
    Path target = worker.root().resolve("usr/local/bin/k3s");
    Path tmp = target.resolveSibling("k3s.tmp");
    Files.copy(
        Path.of(releases.release(version).binary().source()),
        tmp,
        StandardCopyOption.REPLACE_EXISTING);
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private Process systemctl(String... args) throws IOException, InterruptedException {
    return systemctl(worker, args);
  }

  private Process systemctl(SandboxHost host, String... args)
      throws IOException, InterruptedException {
    List<String> command =
        new java.util.ArrayList<>(List.of(hosts.sandboxBin().resolve("systemctl").toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("INPLACE_HOST_ROOT", host.root().toString());
    Process p = builder.start();
    p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
    p.waitFor();
    return p;
  }

  private void assertEventually(boolean ready, String version) {
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(50))
        .untilAsserted(
            () -> {
              assertEquals(ready, ready());
              assertEquals(version, kubeletVersion());
            });
  }

  private Node node() {
    return client.nodes().withName("worker-1").get();
  }

  private NodeCondition etcdVoter(String name) {
    return condition(name, KubeletSimulator.ETCD_VOTER_CONDITION);
  }

  private boolean ready(String name) {
    NodeCondition c = condition(name, "Ready");
    return c != null && "True".equals(c.getStatus());
  }

  private NodeCondition condition(String name, String type) {
    return condition(client.nodes().withName(name).get(), type);
  }

  private static NodeCondition condition(Node node, String type) {
    if (node.getStatus() == null || node.getStatus().getConditions() == null) {
      return null;
    }
    return node.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private NodeCondition readyCondition() {
    Node node = node();
    if (node.getStatus() == null || node.getStatus().getConditions() == null) {
      return null;
    }
    return node.getStatus().getConditions().stream()
        .filter(c -> "Ready".equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private boolean ready() {
    NodeCondition c = readyCondition();
    return c != null && "True".equals(c.getStatus());
  }

  private String kubeletVersion() {
    Node node = node();
    return node.getStatus() == null || node.getStatus().getNodeInfo() == null
        ? null
        : node.getStatus().getNodeInfo().getKubeletVersion();
  }
}
