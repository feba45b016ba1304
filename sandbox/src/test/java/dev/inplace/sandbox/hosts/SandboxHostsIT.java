package dev.inplace.sandbox.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.UpgradeStep;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.common.Buffer;
import net.schmizz.sshj.common.DisconnectReason;
import net.schmizz.sshj.common.KeyType;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.AfterParameterizedClassInvocation;
import org.junit.jupiter.params.BeforeParameterizedClassInvocation;
import org.junit.jupiter.params.Parameter;
import org.junit.jupiter.params.ParameterizedClass;
import org.junit.jupiter.params.provider.EnumSource;

/** Runs against both host servers: embedded MINA and one real OpenSSH sshd per node. */
@ParameterizedClass
@EnumSource(HostServer.class)
class SandboxHostsIT {
  private static final String OLD = "v1.30.4+k3s1";
  private static final String NEW = "v1.31.2+k3s1";

  @Parameter HostServer server;
  static Path estate;
  static FakeReleases releases;
  static SandboxHosts hosts;

  /** MINA nodes on 127.0.0.60.., OpenSSH nodes on 127.0.0.70.. (both on port 2222). */
  private static int firstOctet(HostServer server) {
    return server == HostServer.MINA ? 60 : 70;
  }

  private String address(int index) {
    return "127.0.0." + (firstOctet(server) + index);
  }

  @BeforeParameterizedClassInvocation
  static void startEstate(HostServer server) throws IOException {
    estate = Files.createTempDirectory("sandbox-hosts-it-" + server.cliName());
    releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small());
    releases.add(OLD);
    releases.add(NEW);
    hosts =
        SandboxHosts.open(
            estate, new SandboxHosts.Settings("inplace", 2222, firstOctet(server), server));
    hosts.provision("cp-1", NodeRole.CONTROL_PLANE, OLD, releases);
    hosts.provision("worker-1", NodeRole.WORKER, OLD, releases);
  }

  @AfterParameterizedClassInvocation
  static void stopEstate() throws IOException {
    if (hosts != null) {
      hosts.close();
      hosts = null;
    }
    try (java.util.stream.Stream<Path> files = Files.walk(estate)) {
      files.sorted(java.util.Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    }
  }

  @Test
  void provisionLaysOutTheNodeAndGivesEachNodeItsOwnAddressAndOnePort() throws IOException {
    SandboxHost cp = hosts.host("cp-1");
    SandboxHost worker = hosts.host("worker-1");
    assertEquals(address(0), cp.address());
    assertEquals(address(1), worker.address());
    assertEquals(hosts.port(), cp.port());
    assertEquals(hosts.port(), worker.port());
    assertEquals("k3s", cp.service());
    assertEquals("k3s-agent", worker.service());

    Path binary = worker.root().resolve("usr/local/bin/k3s");
    assertEquals("rwxr-xr-x", PosixFilePermissions.toString(Files.getPosixFilePermissions(binary)));
    assertEquals(releases.release(OLD).binary().sha256(), Sha256.of(binary));
    assertTrue(
        Files.exists(
            worker
                .root()
                .resolve(
                    "var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64-v1.30.4-k3s1.tar")));
    assertEquals(
        "active", Files.readString(worker.root().resolve("run/sandbox/services/k3s-agent")).trim());

    List<String> lines = hosts.knownHosts().lines().toList();
    assertEquals(2, lines.size());
    assertTrue(lines.get(0).startsWith("[" + address(0) + "]:" + hosts.port() + " ssh-ed25519 AAAA"));
    assertEquals(hosts.knownHosts(), Files.readString(hosts.knownHostsFile()));
  }

  @Test
  void clientKeyLoadsInSshjWithJdkProvidersOnly() throws IOException {
    assertTrue(hosts.clientPrivateKey().startsWith("-----BEGIN OPENSSH PRIVATE KEY-----"));
    KeyProvider key = SshTestClient.loadClientKey(hosts);
    assertEquals(KeyType.RSA, key.getType());
    assertFalse(
        key.getPrivate().getClass().getName().startsWith("org.bouncycastle"),
        key.getPrivate().getClass().getName());
    String publicKey =
        Base64.getEncoder()
            .encodeToString(
                new Buffer.PlainBuffer().putPublicKey(key.getPublic()).getCompactData());
    assertEquals(hosts.clientPublicKey().split(" ")[1], publicKey);
  }

  @Test
  void sshjWithoutBouncyCastleInItsOwnJvmAuthenticatesAndPinsHostKeys() throws Exception {
    Path key = estate.resolve("probe-key");
    Files.writeString(key, hosts.clientPrivateKey());
    SandboxHost worker = hosts.host("worker-1");

    Probe ok = probe(worker, key, hosts.knownHostsFile(), "echo \"$INPLACE_HOST_ROOT\"");
    assertEquals(0, ok.exit(), ok.output());
    assertEquals(worker.root() + "\n", ok.output());

    Path wrong = estate.resolve("wrong_known_hosts");
    String cpKey = hosts.host("cp-1").knownHostsLine().split(" ", 2)[1];
    Files.writeString(wrong, "[" + worker.address() + "]:" + worker.port() + " " + cpKey + "\n");
    Probe refused = probe(worker, key, wrong, "true");
    assertEquals(4, refused.exit(), refused.output());
    assertTrue(refused.output().contains("HOST_KEY_NOT_VERIFIABLE"), refused.output());
  }

  @Test
  void sshjConnectsWithThePinnedKnownHostsAndRefusesAWrongHostKey() throws IOException {
    try (SshTestClient client = SshTestClient.connect(hosts, "worker-1")) {
      assertEquals("hello\n", client.exec("echo hello", null).stdout());
    }
    // worker-1's address pinned to cp-1's host key: the client must refuse the server.
    String cpKey = hosts.host("cp-1").knownHostsLine().split(" ", 2)[1];
    String wrong = "[127.0.0.61]:" + hosts.port() + " " + cpKey + "\n";
    TransportException refused =
        assertThrows(
            TransportException.class, () -> SshTestClient.connect(hosts, "worker-1", wrong));
    assertEquals(DisconnectReason.HOST_KEY_NOT_VERIFIABLE, refused.getDisconnectReason());
  }

  @Test
  void execRunsInTheNodeRootWithInplaceHostRootAndPropagatesExitStatus() throws IOException {
    Path root = hosts.host("cp-1").root();
    try (SshTestClient client = SshTestClient.connect(hosts, "cp-1")) {
      SshTestClient.Result pwd =
          client.exec("pwd; echo \"$INPLACE_HOST_ROOT\"; echo oops >&2", null);
      assertEquals(root + "\n" + root + "\n", pwd.stdout());
      assertEquals("oops\n", pwd.stderr());
      assertEquals(0, pwd.exit());
      assertEquals(7, client.exec("exit 7", null).exit());
      SshTestClient.Result script =
          client.script("install", "cat \"$root/run/sandbox/services/k3s\"; whoami >/dev/null");
      assertEquals(0, script.exit(), script.stderr());
      assertEquals("active\n", script.stdout());
      assertEquals("stdin-line\n", client.exec("cat", "stdin-line\n").stdout());
    }
  }

  @Test
  void sftpWritesLandUnderTheNodeRoot() throws IOException {
    Path local = estate.resolve("upload.bin");
    Files.writeString(local, "payload");
    try (SshTestClient client = SshTestClient.connect(hosts, "worker-1")) {
      client.upload(local, "/var/lib/inplace/staging/k3s.abc");
    }
    Path landed = hosts.host("worker-1").root().resolve("var/lib/inplace/staging/k3s.abc");
    assertEquals("payload", Files.readString(landed));
  }

  @Test
  void armedInstallFaultFailsOnlyTheInstallScriptUntilCleared() throws IOException {
    hosts.faults().arm("worker-1", UpgradeStep.INSTALL, NEW);
    try (SshTestClient client = SshTestClient.connect(hosts, "worker-1")) {
      String body = "touch \"$root/install-ran\"";
      for (int attempt = 0; attempt < 2; attempt++) {
        SshTestClient.Result failed = client.script("install", body);
        assertEquals(1, failed.exit());
        assertEquals("sandbox: injected fault at install on worker-1\n", failed.stderr());
      }
      assertFalse(Files.exists(hosts.host("worker-1").root().resolve("install-ran")));
      assertEquals(0, client.script("backup", "true").exit());
      // another node is not affected
      try (SshTestClient cp = SshTestClient.connect(hosts, "cp-1")) {
        assertEquals(0, cp.script("install", "true").exit());
      }

      hosts.faults().clear("worker-1", UpgradeStep.INSTALL);
      SshTestClient.Result ok = client.script("install", body);
      assertEquals(0, ok.exit(), ok.stderr());
      assertTrue(Files.exists(hosts.host("worker-1").root().resolve("install-ran")));
    }
  }

  @Test
  void restartFailsOnlyWhileTheInstalledBinaryReportsTheArmedVersion() throws IOException {
    SandboxHost cp = hosts.host("cp-1");
    Path services = cp.root().resolve("run/sandbox/services");
    hosts.faults().arm("cp-1", UpgradeStep.RESTART, NEW);
    try (SshTestClient client = SshTestClient.connect(hosts, "cp-1")) {
      long before = restarts(services);
      // the old binary is installed: the fault does not bite
      SshTestClient.Result oldRestart = client.script("restart", "systemctl restart k3s");
      assertEquals(0, oldRestart.exit(), oldRestart.stderr());
      assertEquals(before + 1, restarts(services));

      Path newBinary = Path.of(releases.release(NEW).binary().source());
      client.upload(newBinary, "/var/lib/inplace/staging/k3s.new");
      SshTestClient.Result swap =
          client.script(
              "install",
              "install -m 0755 \"$root/var/lib/inplace/staging/k3s.new\""
                  + " \"$root/usr/local/bin/k3s\"");
      assertEquals(0, swap.exit(), swap.stderr());

      SshTestClient.Result failed = client.script("restart", "systemctl restart k3s.service");
      assertEquals(1, failed.exit());
      assertEquals(
          "Job for k3s.service failed because the control process exited with error code.",
          failed.stderr().lines().findFirst().orElse(""));
      assertEquals("failed\n", client.exec("systemctl is-active k3s", null).stdout());
      assertEquals(3, client.exec("systemctl is-active k3s", null).exit());
      assertEquals(before + 1, restarts(services));

      // rollback: the old binary starts fine although the fault is still armed
      Path oldBinary = Path.of(releases.release(OLD).binary().source());
      client.upload(oldBinary, "/var/lib/inplace/backup/k3s");
      assertEquals(
          0,
          client
              .script(
                  "restore",
                  "cp \"$root/var/lib/inplace/backup/k3s\" \"$root/usr/local/bin/k3s\"; chmod 0755"
                      + " \"$root/usr/local/bin/k3s\"; systemctl restart k3s")
              .exit());
      assertEquals("active\n", client.exec("systemctl is-active k3s", null).stdout());
      assertEquals(before + 2, restarts(services));
    } finally {
      hosts.faults().clear("cp-1");
    }
  }

  @Test
  void sudoRequiresNonInteractiveMode() throws IOException {
    try (SshTestClient client = SshTestClient.connect(hosts, "cp-1")) {
      SshTestClient.Result interactive = client.exec("sudo true", null);
      assertEquals(1, interactive.exit());
      assertTrue(interactive.stderr().contains("a password is required"), interactive.stderr());
      assertEquals(0, client.exec("sudo -n true", null).exit());
    }
  }

  @Test
  void droppedHostIsUnreachableUntilRestoredWithTheSameHostKey() throws IOException {
    hosts.drop("worker-1");
    try {
      assertThrows(IOException.class, () -> SshTestClient.connect(hosts, "worker-1"));
    } finally {
      hosts.restore("worker-1");
    }
    try (SshTestClient client = SshTestClient.connect(hosts, "worker-1")) {
      assertEquals(0, client.exec("true", null).exit());
    }
  }

  @Test
  void slowLinkThrottlesSftpUploads() throws IOException {
    assumeTrue(server == HostServer.MINA, "a slow link is MINA's write throttle");
    Path local = estate.resolve("slow.bin");
    Files.write(local, new byte[256 * 1024]);
    hosts.slowLink("cp-1", 512 * 1024);
    try (SshTestClient client = SshTestClient.connect(hosts, "cp-1")) {
      long start = System.nanoTime();
      client.upload(local, "/var/lib/inplace/staging/slow.bin");
      Duration took = Duration.ofNanos(System.nanoTime() - start);
      assertTrue(took.toMillis() >= 400, "upload of 256 KiB at 512 KiB/s took only " + took);
    } finally {
      hosts.slowLink("cp-1", 0);
    }
  }

  @Test
  void openSshSessionsStartInTheNodesHomeNotWithTheMachinesOwnRootDotfiles() throws IOException {
    // sshd runs each session through the user's shell, and bash sources ~/.bashrc for sshd: with the
    // machine's root HOME, a developer's .bashrc (pyenv init) cost 1.1 s and ~100 processes per
    // session. The node root is the session's HOME from the start, so its (absent) .bashrc is read.
    assumeTrue(server == HostServer.OPENSSH);
    Path rc = hosts.host("worker-1").root().resolve(".bashrc");
    Files.writeString(rc, "export INPLACE_SESSION_RC=node-root\n");
    try (SshTestClient client = SshTestClient.connect(hosts, "worker-1")) {
      SshTestClient.Result rcSeen = client.exec("echo \"${INPLACE_SESSION_RC:-none}\"", null);
      assertEquals("node-root", rcSeen.stdout().strip(), rcSeen.stderr());
    } finally {
      Files.delete(rc);
    }
  }

  @Test
  void openSshNodesGetTheirRootFromSshdConfigNotFromTheClient() throws IOException {
    assumeTrue(server == HostServer.OPENSSH);
    Path config = estate.resolve("openssh/worker-1/sshd_config");
    String text = Files.readString(config);
    Path root = hosts.host("worker-1").root();
    assertTrue(text.contains("SetEnv \"HOME=" + root + "\" \"INPLACE_HOST_ROOT=" + root + "\""), text);
    assertTrue(text.contains("UsePAM no") && text.contains("StrictModes no"), text);
    try (SshTestClient client = SshTestClient.connect(hosts, "worker-1")) {
      // A real sshd process serves the node: the session's parent is sshd.
      SshTestClient.Result parent = client.exec("ps -o comm= -p $PPID", null);
      assertTrue(parent.stdout().startsWith("sshd"), parent.stdout() + parent.stderr());
    }
  }

  @Test
  void reopeningTheEstateKeepsClientAndHostKeys() {
    try (SandboxHosts again = SandboxHosts.open(estate, SandboxHosts.Settings.defaults())) {
      assertEquals(hosts.clientPublicKey(), again.clientPublicKey());
      assertEquals(
          Map.of(), again.faults().armed("cp-1")); // faults live in the node roots, none armed now
    }
  }

  private record Probe(int exit, String output) {}

  /** Runs {@link SshjProbe} in a fresh JVM (no MINA, so BouncyCastle is not registered there). */
  private static Probe probe(SandboxHost host, Path key, Path knownHosts, String command)
      throws Exception {
    String javaCommand = ProcessHandle.current().info().command().orElse("java");
    Process p =
        new ProcessBuilder(
                javaCommand,
                "-cp",
                System.getProperty("java.class.path"),
                SshjProbe.class.getName(),
                host.address(),
                String.valueOf(host.port()),
                hosts.user(),
                key.toString(),
                knownHosts.toString(),
                command)
            .redirectError(ProcessBuilder.Redirect.PIPE)
            .start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(p.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(60, TimeUnit.SECONDS));
    // stderr carries sshj's own logging; keep only what the probe prints on refusal
    String refusal =
        err.lines()
            .filter(l -> l.startsWith("refused: ") || l.startsWith("BouncyCastle"))
            .findFirst()
            .orElse("");
    return new Probe(p.exitValue(), p.exitValue() == 0 ? out : refusal + "\n" + err);
  }

  private static long restarts(Path services) throws IOException {
    return Long.parseLong(
        Files.readString(services.resolve("k3s.restarts"), StandardCharsets.UTF_8).trim());
  }
}
