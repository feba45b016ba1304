package dev.inplace.sandbox.hosts;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.kube.KubeClients;
import dev.inplace.activities.kube.NodeActivitiesImpl;
import dev.inplace.sandbox.kube.SandboxApiServer;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneCheckRequest;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodeActivities.ExpectedNode;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link NodeActivitiesImpl#awaitControlPlaneHealthy} against the sandbox: a k3s server restarted
 * on a new binary is waited for until the kubelet simulator reports it Ready at the new version and
 * promoted to an etcd voter, and {@link SandboxApiServer}'s {@code /readyz} answers ok.
 */
class ControlPlaneHealthIT {
  private static final ClusterRef CLUSTER = new ClusterRef("capi-system", "c1");
  private static final String V1 = "v1.30.4+k3s1";
  private static final String V2 = "v1.31.2+k3s1";

  @TempDir Path estate;
  private SandboxApiServer server;
  private KubernetesClient client;
  private FakeReleases releases;
  private SandboxHosts hosts;
  private SandboxHost cp;
  private KubeletSimulator kubelet;
  private KubeClients clients;
  private TestActivityEnvironment env;
  private NodeActivities activities;
  private final List<List<?>> heartbeats = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() {
    server = SandboxApiServer.start();
    client = server.client();
    client
        .secrets()
        .inNamespace(CLUSTER.namespace())
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withNamespace(CLUSTER.namespace())
                .withName("c1-kubeconfig")
                .endMetadata()
                .addToData(
                    "value",
                    Base64.getEncoder()
                        .encodeToString(server.kubeconfig().getBytes(StandardCharsets.UTF_8)))
                .build())
        .create();
    releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small());
    releases.add(V1);
    releases.add(V2);
    hosts = SandboxHosts.open(estate, new SandboxHosts.Settings("inplace", 0, 100));
    cp = hosts.provision("cp-1", NodeRole.CONTROL_PLANE, V1, releases);
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName("cp-1").endMetadata().build())
        .create();
    kubelet =
        KubeletSimulator.start(
            client,
            hosts.simulatedNodes(),
            new KubeletSimulator.Settings(Duration.ofMillis(800), Duration.ofMillis(50)));
    clients = new KubeClients(client);
    env = TestActivityEnvironment.newInstance();
    env.registerActivitiesImplementations(new NodeActivitiesImpl(clients, Duration.ofMillis(100)));
    env.setActivityHeartbeatListener(List.class, heartbeats::add);
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
  void tearDown() {
    env.close();
    clients.close();
    kubelet.close();
    hosts.close();
    server.close();
  }

  @Test
  void waitsForTheRestartedServerToBeReadyAtTheNewVersionAndAVoterAgain() throws Exception {
    awaitReady();
    install(V2);
    assertEquals(0, systemctl("restart", "k3s"));

    ControlPlaneHealth health =
        activities.awaitControlPlaneHealthy(
            new ControlPlaneCheckRequest(CLUSTER, List.of(new ExpectedNode("cp-1", V2)), true, 20));

    assertEquals(
        new ControlPlaneHealth(
            true,
            List.of(
                "node cp-1 Ready at " + V2, "node cp-1 EtcdIsVoter=True", "apiserver /readyz ok")),
        health);
    assertFalse(heartbeats.isEmpty(), "the restarted server was not healthy at the first look");
    String first = heartbeats.get(0).toString();
    assertTrue(
        first.contains("node cp-1 is not Ready") || first.contains("runs kubelet " + V1), first);
  }

  @Test
  void anUnreadyApiServerMakesTheControlPlaneUnhealthy() {
    awaitReady();
    server.setReady(false);

    ActivityFailure failure =
        assertThrows(
            ActivityFailure.class,
            () ->
                activities.awaitControlPlaneHealthy(
                    new ControlPlaneCheckRequest(
                        CLUSTER, List.of(new ExpectedNode("cp-1", V1)), true, 1)));

    ApplicationFailure cause = assertInstanceOf(ApplicationFailure.class, failure.getCause());
    assertEquals(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, cause.getType());
    assertTrue(
        cause
            .getOriginalMessage()
            .endsWith("1s: apiserver /readyz answered HTTP 500: [-]etcd failed: reason withheld"),
        cause.getOriginalMessage());
  }

  private void awaitReady() {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> activities.inspectNode(new NodeActivities.NodeRequest(CLUSTER, "cp-1")).ready());
  }

  private void install(String version) throws IOException {
    Path target = cp.root().resolve("usr/local/bin/k3s");
    Path tmp = target.resolveSibling("k3s.tmp");
    Files.copy(
        Path.of(releases.release(version).binary().source()),
        tmp,
        StandardCopyOption.REPLACE_EXISTING);
    Files.move(tmp, target, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private int systemctl(String... args) throws IOException, InterruptedException {
    List<String> command =
        new java.util.ArrayList<>(List.of(hosts.sandboxBin().resolve("systemctl").toString()));
    command.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("INPLACE_HOST_ROOT", cp.root().toString());
    Process p = builder.start();
    p.getInputStream().transferTo(java.io.OutputStream.nullOutputStream());
    return p.waitFor();
  }
}
