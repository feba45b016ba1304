package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.sandbox.SandboxSlot;
import dev.inplace.sandbox.hosts.HostServer;
import dev.inplace.sandbox.hosts.SandboxHost;
import dev.inplace.sandbox.hosts.SandboxHosts;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestbedBinaries;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code inplace hosts scan} against real OpenSSH sshd hosts (one per node, the sandbox's), a
 * real kube-apiserver as the workload cluster (Node authorizer and NodeRestriction: the nodes'
 * own credentials publish their keys through the shipped snippet, run with the real kubectl), and
 * fabric8's mock server in CRUD mode as the management cluster (Cluster, Machines, Secrets).
 */
class HostsScanIT {
  private static final String NS = "fleet";
  private static final String SECRET = "edge-1-known-hosts";
  private static Path estate;
  private static SandboxHosts hosts;
  private static KubeControlPlane workloadPlane;
  private static TestbedBinaries binaries;
  private static KubernetesClient workloadAdmin;

  private final KubernetesMockServer managementServer =
      new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
  private KubernetesClient management;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeAll
  static void startHostsAndWorkloadCluster() throws IOException {
    estate = Files.createTempDirectory("hosts-scan-it");
    FakeReleases releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small());
    releases.add("v1.31.2+k3s1");
    hosts = SandboxHosts.open(estate, new SandboxHosts.Settings("inplace", 0, 40 + SandboxSlot.hostOctetOffset(), HostServer.OPENSSH));
    hosts.provision("cp-1", NodeRole.CONTROL_PLANE, "v1.31.2+k3s1", releases);
    hosts.provision("worker-1", NodeRole.WORKER, "v1.31.2+k3s1", releases);
    binaries = TestbedBinaries.locate();
    workloadPlane = KubeControlPlane.start("workload", estate.resolve("workload"), binaries);
    workloadAdmin = client(Files.readString(workloadPlane.adminKubeconfig()));
    for (String node : List.of("cp-1", "worker-1")) {
      workloadAdmin.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).create();
    }
  }

  @AfterAll
  static void stopAll() {
    if (workloadAdmin != null) {
      workloadAdmin.close();
    }
    if (workloadPlane != null) {
      workloadPlane.close();
    }
    if (hosts != null) {
      hosts.close();
    }
  }

  @BeforeEach
  void managementCluster() {
    managementServer.init();
    management = managementServer.createClient();
    create("Cluster", "clusters", "edge-1", Map.of(), Map.of());
    for (SandboxHost host : hosts.hosts()) {
      machine("edge-1-" + host.name(), host.name(), host.address());
    }
    management.secrets().resource(new SecretBuilder().withNewMetadata().withNamespace(NS).withName("edge-1-kubeconfig")
        .endMetadata().addToData("value", Base64.getEncoder().encodeToString(
            workloadPlane.adminKubeconfigYaml().getBytes(StandardCharsets.UTF_8))).build()).create();
    for (String node : List.of("cp-1", "worker-1")) {
      workloadAdmin.nodes().withName(node).edit(n -> {
        if (n.getMetadata().getAnnotations() != null) {
          n.getMetadata().getAnnotations().remove(NodePublishedKeys.ANNOTATION);
        }
        return n;
      });
    }
  }

  @AfterEach
  void stopManagement() {
    management.close();
    managementServer.destroy();
  }

  @Test
  void fingerprintsGivenWithExpectArePinnedAndTheProductConnectsWithTheWrittenSecret() throws Exception {
    int code = scan(List.of("--expect", "edge-1-cp-1=" + keygenFingerprint("cp-1"),
        "--expect", hosts.host("worker-1").address() + "=" + keygenFingerprint("worker-1")), none());

    assertEquals(0, code, output());
    String knownHosts = knownHosts();
    assertEquals(List.of(pinnedLine("cp-1"), pinnedLine("worker-1")), knownHosts.lines().toList());
    assertTrue(output().contains(keygenFingerprint("cp-1")), output());
    assertTrue(output().contains("confirmed by --expect"), output());
    for (SandboxHost host : hosts.hosts()) {
      productConnects(host, knownHosts);
    }
  }

  @Test
  void aFingerprintThatDoesNotMatchRefusesAndLeavesTheSecretAsItWas() throws Exception {
    String before = "bastion.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBastionKeyKeptAsItIsXXXXXXXXXXXXXXXXXXXX\n";
    management.secrets().resource(new SecretBuilder().withNewMetadata().withNamespace(NS).withName(SECRET).endMetadata()
        .addToData(SshSettings.KNOWN_HOSTS_DATA_KEY, Base64.getEncoder().encodeToString(before.getBytes(StandardCharsets.UTF_8)))
        .build()).create();
    String version = secret().getMetadata().getResourceVersion();

    // worker-1's fingerprint given for cp-1: what a host in the middle would show.
    int code = scan(List.of("--expect", "cp-1=" + keygenFingerprint("worker-1"),
        "--expect", "worker-1=" + keygenFingerprint("worker-1")), none());

    assertEquals(1, code, output());
    assertTrue(output().contains("not confirmed: edge-1-cp-1 (" + hosts.host("cp-1").address() + "): MISMATCH: expected "
        + keygenFingerprint("worker-1")), output());
    assertTrue(errors().contains("1 of 2 hosts not confirmed; nothing written to Secret fleet/" + SECRET), errors());
    assertEquals(before, knownHosts());
    assertEquals(version, secret().getMetadata().getResourceVersion());
  }

  @Test
  void keysTheNodesPublishedWithTheirOwnCredentialsArePinnedByFromNodeAnnotations() throws Exception {
    for (SandboxHost host : hosts.hosts()) {
      publishAsNode(host.name(), host.name());
    }
    assertEquals(publicKeyText(hosts.host("cp-1").name()),
        workloadAdmin.nodes().withName("cp-1").get().getMetadata().getAnnotations().get(NodePublishedKeys.ANNOTATION));

    int code = scan(List.of("--from-node-annotations"), none());

    assertEquals(0, code, output());
    assertEquals(List.of(pinnedLine("cp-1"), pinnedLine("worker-1")), knownHosts().lines().toList());
    assertTrue(output().contains("confirmed by node annotation"), output());
    productConnects(hosts.host("worker-1"), knownHosts());
  }

  @Test
  void aNodesCredentialsCannotPublishOnAnotherNodeAndAWrongPublishedKeyRefusesTheScan() throws Exception {
    publishAsNode("cp-1", "cp-1");
    // worker-1's kubelet identity trying to publish for cp-1 is refused by the API server.
    Run stolen = runKubectl("worker-1", "annotate", "node", "cp-1", "--overwrite",
        NodePublishedKeys.ANNOTATION + "=" + publicKeyText("worker-1"));
    assertNotEquals(0, stolen.code());
    assertTrue(stolen.err().contains("Forbidden") || stolen.err().contains("forbidden"), stolen.err());
    assertEquals(publicKeyText("cp-1"),
        workloadAdmin.nodes().withName("cp-1").get().getMetadata().getAnnotations().get(NodePublishedKeys.ANNOTATION));
    // worker-1 publishes cp-1's key as its own (a host that is not the one at worker-1's address).
    publishAsNode("worker-1", "cp-1");

    int code = scan(List.of("--from-node-annotations"), none());

    assertEquals(1, code, output());
    assertTrue(output().contains("not confirmed: edge-1-worker-1 (" + hosts.host("worker-1").address() + "): MISMATCH: it shows"),
        output());
    assertNull(secret());
  }

  @Test
  void aHostThatDoesNotAnswerIsNamedAndNothingIsWritten() throws Exception {
    hosts.drop("worker-1");
    try {
      int code = scan(List.of("--expect", "cp-1=" + keygenFingerprint("cp-1"), "--expect", "worker-1=" + keygenFingerprint("worker-1")), none());
      assertEquals(1, code, output());
      assertTrue(output().contains("not confirmed: edge-1-worker-1 (" + hosts.host("worker-1").address() + "): "
          + hosts.host("worker-1").address() + ":" + hosts.port() + " does not answer (connection refused)"), output());
      assertNull(secret());
    } finally {
      hosts.restore("worker-1");
    }
  }

  @Test
  void aHostThatAcceptsButNeverSpeaksIsCutAtTheTimeout() throws Exception {
    String address = "127.0.0." + (40 + SandboxSlot.hostOctetOffset() + 5);
    machine("edge-1-silent", "silent", address);
    try (ServerSocket silent = new ServerSocket(hosts.port(), 5, InetAddress.getByName(address))) {
      long started = System.nanoTime();
      int code = scan(List.of("--machine", "edge-1-silent", "--timeout", "2s", "--expect", "silent=" + keygenFingerprint("cp-1")), none());
      long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - started);
      assertEquals(1, code, output());
      assertTrue(output().contains("edge-1-silent (" + address + "): " + address + ":" + hosts.port() + " does not answer"), output());
      assertTrue(seconds < 10, "took " + seconds + " s");
      assertNull(secret());
    }
  }

  @Test
  void withoutASourceTheFingerprintsAreShownAndOnlyAYesAtTheTerminalWrites() throws Exception {
    assertEquals(1, scan(List.of(), none()), output());
    assertTrue(output().contains(keygenFingerprint("cp-1")) && output().contains(keygenFingerprint("worker-1")), output());
    assertTrue(errors().contains("no source confirms these keys"), errors());
    assertNull(secret());

    List<String> asked = new ArrayList<>();
    assertEquals(1, scan(List.of(), prompt -> {
      asked.add(prompt);
      return Optional.of("no");
    }), output());
    assertEquals(1, asked.size());
    assertNull(secret());

    assertEquals(0, scan(List.of(), prompt -> Optional.of("yes")), output());
    assertEquals(List.of(pinnedLine("cp-1"), pinnedLine("worker-1")), knownHosts().lines().toList());
  }

  @Test
  void rescanningOneMachineReplacesOnlyItsLinesAndKeepsTheOthers() throws Exception {
    String bastion = "bastion.example ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIBastionKeyKeptAsItIsXXXXXXXXXXXXXXXXXXXX";
    String stale = KnownHostsText.hostPattern(hosts.host("cp-1").address(), hosts.port()) + " " + publicKeyText("worker-1");
    management.secrets().resource(new SecretBuilder().withNewMetadata().withNamespace(NS).withName(SECRET).endMetadata()
        .addToData(SshSettings.KNOWN_HOSTS_DATA_KEY, Base64.getEncoder().encodeToString(
            (bastion + "\n" + stale + "\n" + pinnedLine("worker-1") + "\n").getBytes(StandardCharsets.UTF_8)))
        .addToData("other", Base64.getEncoder().encodeToString("kept".getBytes(StandardCharsets.UTF_8))).build()).create();

    assertEquals(0, scan(List.of("--machine", "edge-1-cp-1", "--expect", "cp-1=" + keygenFingerprint("cp-1")), none()), output());

    assertEquals(List.of(bastion, pinnedLine("worker-1"), pinnedLine("cp-1")), knownHosts().lines().toList());
    assertEquals("kept", new String(Base64.getDecoder().decode(secret().getData().get("other")), StandardCharsets.UTF_8));
  }

  // --- helpers ---

  private int scan(List<String> options, Function<String, Optional<String>> terminal) {
    out.reset();
    err.reset();
    List<String> args = new ArrayList<>(List.of("hosts", "scan", NS + "/edge-1", "--ssh-port", String.valueOf(hosts.port())));
    args.addAll(options);
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    CliContext context = CliContext.of(null, "q", o, 0).withKubernetes(path -> management).withTerminal(terminal);
    return InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args.toArray(String[]::new));
  }

  private static Function<String, Optional<String>> none() {
    return prompt -> Optional.empty();
  }

  private String output() {
    return out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
  }

  private String errors() {
    return err.toString(StandardCharsets.UTF_8);
  }

  private Secret secret() {
    return management.secrets().inNamespace(NS).withName(SECRET).get();
  }

  private String knownHosts() {
    return KnownHostsSecret.knownHosts(secret());
  }

  private void create(String kind, String plural, String name, Map<String, String> labels, Map<String, Object> status) {
    GenericKubernetesResource r = new GenericKubernetesResourceBuilder().withApiVersion("cluster.x-k8s.io/v1beta2").withKind(kind)
        .withNewMetadata().withNamespace(NS).withName(name).withLabels(labels).endMetadata().build();
    r.setAdditionalProperty("spec", Map.of());
    r.setAdditionalProperty("status", status);
    management.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup("cluster.x-k8s.io")
        .withVersion("v1beta2").withKind(kind).withPlural(plural).withNamespaced(true).build()).resource(r).create();
  }

  private void machine(String name, String node, String address) {
    create("Machine", "machines", name, Map.of("cluster.x-k8s.io/cluster-name", "edge-1"),
        Map.of("nodeRef", Map.of("name", node),
            "addresses", List.of(Map.of("type", "Hostname", "address", node), Map.of("type", "InternalIP", "address", address))));
  }

  private static Path publicKeyFile(String node) {
    return hosts.estateDir().resolve("ssh/host-keys/" + node + "_ed25519_key.pub");
  }

  /** {@code TYPE BASE64} of the node's host key, from its .pub file. */
  private static String publicKeyText(String node) throws IOException {
    String[] fields = Files.readString(publicKeyFile(node)).trim().split("\\s+");
    return fields[0] + " " + fields[1];
  }

  private static String pinnedLine(String node) throws IOException {
    return KnownHostsText.hostPattern(hosts.host(node).address(), hosts.port()) + " " + publicKeyText(node);
  }

  /** The fingerprint OpenSSH's own ssh-keygen -lf prints for the node's host key: what an operator checks. */
  private static String keygenFingerprint(String node) throws Exception {
    Process p = new ProcessBuilder("ssh-keygen", "-lf", publicKeyFile(node).toString()).redirectErrorStream(true).start();
    String line = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS) && p.exitValue() == 0, line);
    return line.split("\\s+")[1];
  }

  /** The shipped snippet, run with {@code node}'s kubelet credentials, publishing {@code keysOf}'s public key. */
  private static void publishAsNode(String node, String keysOf) throws Exception {
    Path script = Files.writeString(estate.resolve("publish-host-keys.sh"), BootstrapSnippet.script());
    ProcessBuilder builder = new ProcessBuilder("sh", script.toString()).redirectErrorStream(true);
    builder.environment().put("INPLACE_KUBELET_KUBECONFIG", nodeKubeconfig(node).toString());
    builder.environment().put("INPLACE_KUBECTL", binaries.binary("kubectl").toString());
    builder.environment().put("INPLACE_HOST_KEYS", publicKeyFile(keysOf).toString());
    builder.environment().put("INPLACE_PUBLISH_ATTEMPTS", "3");
    builder.environment().put("INPLACE_PUBLISH_PAUSE", "1");
    Process p = builder.start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), output);
    assertEquals("publish-host-keys: published 1 host key(s) on Node " + node, output.trim());
  }

  private static Path nodeKubeconfig(String node) {
    return workloadPlane.kubeconfigFor("system:node:" + node, "system:nodes");
  }

  private record Run(int code, String err) {}

  private static Run runKubectl(String asNode, String... args) throws Exception {
    List<String> command = new ArrayList<>(List.of(binaries.binary("kubectl").toString(), "--kubeconfig", nodeKubeconfig(asNode).toString()));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String output = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    return new Run(p.exitValue(), output);
  }

  /** The product's own connector authenticates to {@code host} with the host keys from {@code knownHosts}. */
  private static void productConnects(SandboxHost host, String knownHosts) {
    Map<String, Map<String, byte[]>> secrets = Map.of(
        "ssh-key", Map.of(SshSettings.PRIVATE_KEY_DATA_KEY, hosts.clientPrivateKey().getBytes(StandardCharsets.UTF_8)),
        SECRET, Map.of(SshSettings.KNOWN_HOSTS_DATA_KEY, knownHosts.getBytes(StandardCharsets.UTF_8)));
    SshConnector connector = new SshConnector((namespace, name) -> secrets.get(name),
        new SshClientOptions(java.time.Duration.ofSeconds(5), java.time.Duration.ofSeconds(10),
            java.time.Duration.ofSeconds(30), java.time.Duration.ofSeconds(15), java.time.Duration.ZERO));
    HostAccess access = new HostAccess(NS, host.name(), host.address(),
        new SshSettings(hosts.user(), hosts.port(), "ssh-key", SECRET, null));
    connector.open(access).close();
  }

  private static KubernetesClient client(String kubeconfig) {
    Config config = Config.fromKubeconfig(kubeconfig);
    config.setRequestRetryBackoffLimit(0);
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
