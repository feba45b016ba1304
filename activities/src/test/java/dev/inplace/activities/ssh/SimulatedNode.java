package dev.inplace.activities.ssh;

import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.SshSettings;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyPair;
import java.time.Duration;
import java.util.Map;

/**
 * One simulated node for tests: a {@link TestSshServer} over a node root directory, a client key,
 * and the Secrets (key and known_hosts) an activity reads to reach it.
 */
public final class SimulatedNode implements AutoCloseable {
  public static final String NAMESPACE = "team-a";
  public static final String KEY_SECRET = "edge-ssh-key";
  public static final String KNOWN_HOSTS_SECRET = "edge-known-hosts";

  private final Path root;
  private final Path fakeBin;
  private final KeyPair clientKey;
  private final TestSshServer server;
  private final MapSecretSource secrets = new MapSecretSource();

  public SimulatedNode(Path workDir) throws IOException {
    this(workDir, TestKeys.generate(), s -> {});
  }

  /** A node whose server has {@code hostKey} and {@code tune} applied before it starts. */
  public SimulatedNode(
      Path workDir, KeyPair hostKey, java.util.function.Consumer<org.apache.sshd.server.SshServer> tune)
      throws IOException {
    root = Files.createDirectories(workDir.resolve("node-root"));
    fakeBin = TestSshServer.writeFakes(workDir.resolve("fake-bin"));
    clientKey = TestKeys.generate();
    server = TestSshServer.start(root, fakeBin, clientKey.getPublic(), hostKey, tune);
    setSecrets(privateKeyText(), server.knownHostsLine() + "\n");
  }

  /** Replaces the Secrets the connector reads. */
  public void setSecrets(String privateKey, String knownHosts) {
    secrets.put(
        NAMESPACE,
        KEY_SECRET,
        Map.of(SshSettings.PRIVATE_KEY_DATA_KEY, privateKey.getBytes(StandardCharsets.UTF_8)));
    secrets.put(
        NAMESPACE,
        KNOWN_HOSTS_SECRET,
        Map.of(SshSettings.KNOWN_HOSTS_DATA_KEY, knownHosts.getBytes(StandardCharsets.UTF_8)));
  }

  public String privateKeyText() {
    return TestKeys.openSshPrivateKey(clientKey);
  }

  public java.security.PublicKey clientPublicKey() {
    return clientKey.getPublic();
  }

  public MapSecretSource secrets() {
    return secrets;
  }

  public TestSshServer server() {
    return server;
  }

  public HostAccess access(String user) {
    return new HostAccess(
        NAMESPACE,
        "edge-1",
        "127.0.0.1",
        new SshSettings(user, server.port(), KEY_SECRET, KNOWN_HOSTS_SECRET, null));
  }

  /**
   * A connector whose scripts are cut after 4 s of silence, so every script run against this node
   * must keep pulsing (scripts/lib/pulse.sh every 2 s) to live longer than that.
   */
  public SshConnector connector() {
    return new SshConnector(
        secrets,
        new SshClientOptions(
                Duration.ofSeconds(5),
                Duration.ofSeconds(10),
                Duration.ofSeconds(60),
                Duration.ofSeconds(5))
            .withSilenceLimit(Duration.ofSeconds(4)));
  }

  public Path root() {
    return root;
  }

  /** Where an absolute host path lives under the node root. */
  public Path path(String hostPath) {
    return root.resolve(hostPath.substring(1));
  }

  /** Writes a file on the "host", creating its directory. */
  public Path writeFile(String hostPath, byte[] content) throws IOException {
    Path file = path(hostPath);
    Files.createDirectories(file.getParent());
    Files.write(file, content);
    return file;
  }

  @Override
  public void close() throws IOException {
    server.close();
  }
}
