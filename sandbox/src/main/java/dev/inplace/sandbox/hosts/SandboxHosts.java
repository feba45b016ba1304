package dev.inplace.sandbox.hosts;

import dev.inplace.sandbox.SandboxSlot;
import dev.inplace.sandbox.faults.FaultInjector;
import dev.inplace.sandbox.release.FakeRelease;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated hosts of an estate: one SSH server per node on its own loopback address ({@code
 * 127.0.0.N}, N = first octet + index), all on one port when possible, all accepting one client
 * key.
 *
 * <p>Estate layout: {@code hosts/<node>/} node roots, {@code ssh/} the client key, host keys and
 * known_hosts, {@code sandbox-bin/} the fake host commands ({@code sudo}, {@code systemctl}).
 */
public final class SandboxHosts implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxHosts.class);
  private static final List<String> SANDBOX_BIN = List.of("sudo", "systemctl", "ctr", "etcdctl", "kairos-agent", "kairos-boot", "reboot");
  private static final Pattern NODE_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]{0,61}[a-z0-9])?");

  /**
   * @param user SSH login user accepted by every node
   * @param port preferred SSH port of every node; when taken, a free port is used instead
   * @param firstHostOctet last octet of the first node's address ({@code 127.0.0.<firstHostOctet>})
   * @param server which SSH server plays each node
   */
  public record Settings(String user, int port, int firstHostOctet, HostServer server) {
    public Settings(String user, int port, int firstHostOctet) {
      this(user, port, firstHostOctet, HostServer.MINA);
    }

    public Settings {
      if (user == null || !user.matches("[a-z_][a-z0-9_-]*")) {
        throw new IllegalArgumentException("invalid SSH user '" + user + "'");
      }
      if (port < 0 || port > 65535) {
        throw new IllegalArgumentException("port must be 0..65535, got " + port);
      }
      if (firstHostOctet < 2 || firstHostOctet > 254) {
        throw new IllegalArgumentException("firstHostOctet must be 2..254");
      }
      server = server == null ? HostServer.MINA : server;
      if (server == HostServer.OPENSSH) {
        // sshd logs in real users only: the one running the sandbox (root, see OpenSshServer).
        user = System.getProperty("user.name");
      }
    }

    public Settings withServer(HostServer kind) {
      return new Settings(user, port, firstHostOctet, kind);
    }

    public static Settings defaults() {
      return new Settings("inplace", 2222, 10 + SandboxSlot.hostOctetOffset());
    }
  }

  private final Path estateDir;
  private final Settings settings;
  private final Path hostsDir;
  private final Path sshDir;
  private final Path sandboxBin;
  private final KeyPair clientKey;
  private final FaultInjector faults;
  private final SshFaults sshFaults = new SshFaults();
  private final SshSessions sessions = new SshSessions();
  private final Map<String, SandboxHost> hosts = new LinkedHashMap<>();
  private int sharedPort;

  /** The directory under the estate's that holds one root directory per node, named after it. */
  public static final String HOSTS_DIR = "hosts";

  private SandboxHosts(Path estateDir, Settings settings) {
    this.estateDir = estateDir.toAbsolutePath();
    this.settings = settings;
    this.hostsDir = this.estateDir.resolve(HOSTS_DIR);
    this.sshDir = this.estateDir.resolve("ssh");
    this.sandboxBin = this.estateDir.resolve("sandbox-bin");
    this.sharedPort = settings.port();
    try {
      Files.createDirectories(hostsDir);
      Files.createDirectories(sshDir);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create estate directories under " + estateDir, e);
    }
    installSandboxBin();
    this.clientKey = KeyFiles.loadOrGenerate(sshDir.resolve("id_rsa"), "inplace-sandbox-client", KeyFiles.Kind.RSA);
    this.faults = new FaultInjector(hostsDir);
    if (settings.server() == HostServer.OPENSSH) {
      OpenSshServer.requireUsable();
      installOpenSshFiles();
    }
  }

  /** Opens the hosts of the estate at {@code estateDir}, reusing keys already stored there. */
  public static SandboxHosts open(Path estateDir, Settings settings) {
    return new SandboxHosts(estateDir, settings);
  }

  /**
   * Provisions {@code node} at {@code version} of {@code releases} and starts its SSH server.
   * Calling it again for an existing node reinstalls that version and counts as a service restart.
   */
  public SandboxHost provision(String node, NodeRole role, String version, FakeReleases releases) {
    SandboxHost host = provision(node, role, releases.release(version));
    if (releases.os() == HostOs.KAIROS) {
      installKairos(host, releases, version);
    }
    return host;
  }

  /** How long a rebooting Kairos node stays unreachable before it boots. */
  static final java.time.Duration REBOOT_DOWNTIME = java.time.Duration.ofMillis(500);

  private RebootSimulator reboots;
  private java.time.Duration rebootDowntime = REBOOT_DOWNTIME;

  /** How long rebooting Kairos nodes stay unreachable (tests stretch it to act while a node is down). */
  synchronized void rebootDowntime(java.time.Duration downtime) {
    rebootDowntime = downtime;
    if (reboots != null) {
      reboots.downtime(downtime);
    }
  }

  /**
   * Makes {@code host} a Kairos node booted from {@code version}'s OS image: active and passive
   * both hold it (as after an install), the active entry runs, a boot ID, the registry it pulls from
   * (see sandbox-bin/kairos-agent); reboots are played from now on.
   */
  private synchronized void installKairos(SandboxHost host, FakeReleases releases, String version) {
    Artifact image = releases.osImage(version);
    Path state = host.root().resolve(".sandbox/kairos");
    try {
      Path dir = Files.createDirectories(state.resolve("images").resolve(image.sha256()));
      Process tar = new ProcessBuilder("tar", "-xf", releases.registryDir().resolve(image.sha256() + ".tar").toString(),
          "-C", dir.toString()).redirectErrorStream(true).start();
      String out = new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      if (tar.waitFor() != 0) {
        throw new IOException("tar: " + out);
      }
      writeAtomically(state.resolve("active"), image.sha256() + "\n");
      writeAtomically(state.resolve("passive"), image.sha256() + "\n");
      writeAtomically(state.resolve("booted"), "active_boot\n");
      writeAtomically(state.resolve("default"), "cos\n");
      writeAtomically(state.resolve("registry"), releases.registryDir() + "\n");
      Path bootId = Files.createDirectories(host.root().resolve("proc/sys/kernel/random")).resolve("boot_id");
      writeAtomically(bootId, java.util.UUID.randomUUID() + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot make " + host.name() + " a Kairos node", e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted provisioning " + host.name(), e);
    }
    if (reboots == null) {
      reboots = new RebootSimulator(this::hosts, sandboxBin, rebootDowntime);
    }
  }

  /**
   * Provisions {@code node} with {@code release}; see {@link #provision(String, NodeRole, String,
   * FakeReleases)}.
   */
  public synchronized SandboxHost provision(String node, NodeRole role, FakeRelease release) {
    if (node == null || !NODE_NAME.matcher(node).matches()) {
      throw new IllegalArgumentException("invalid node name '" + node + "'");
    }
    SandboxHost host = hosts.get(node);
    if (host != null && host.role() != role) {
      throw new IllegalArgumentException(
          "node " + node + " is a " + host.role() + ", cannot provision it as " + role);
    }
    boolean isNew = host == null;
    if (isNew) {
      host = newHost(node, role, release.distribution());
    }
    installRelease(host, release);
    if (isNew) {
      startOnSharedPort(host, hosts.isEmpty());
      hosts.put(node, host);
      writeKnownHosts();
    }
    LOG.info(
        "node {}: provisioned as {} at {} on {}:{}",
        node,
        role,
        release.version(),
        host.address(),
        host.port());
    return host;
  }

  public synchronized SandboxHost host(String node) {
    SandboxHost host = hosts.get(node);
    if (host == null) {
      throw new NoSuchElementException("no sandbox host " + node + "; known: " + hosts.keySet());
    }
    return host;
  }

  /** Hosts in provisioning order. */
  public synchronized List<SandboxHost> hosts() {
    return List.copyOf(hosts.values());
  }

  public synchronized List<SimulatedNode> simulatedNodes() {
    return hosts.values().stream().map(SandboxHost::simulatedNode).toList();
  }

  /** Makes {@code node} unreachable: its SSH server stops and open sessions are cut. */
  public void drop(String node) {
    host(node).stop();
  }

  /** Makes {@code node} reachable again, on the same address, port and host key. */
  public void restore(String node) {
    SandboxHost host = host(node);
    try {
      host.start(host.port());
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot restore " + node + " on " + host.address() + ":" + host.port(), e);
    }
  }

  /** Slows SFTP writes to {@code node} to about {@code bytesPerSecond}; 0 restores full speed. */
  public void slowLink(String node, long bytesPerSecond) {
    host(node).throttleSftpWrites(bytesPerSecond);
  }

  public FaultInjector faults() {
    return faults;
  }

  /** The seeded SSH drop and hang faults of every MINA host (OpenSSH hosts ignore them). */
  /** SSH sessions the hosts accepted; empty with OpenSSH hosts (sshd keeps no count for the sandbox). */
  public java.util.OptionalLong sshSessions() {
    return settings.server() == HostServer.OPENSSH ? java.util.OptionalLong.empty()
        : java.util.OptionalLong.of(sessions.count());
  }

  public SshFaults sshFaults() {
    return sshFaults;
  }

  public String user() {
    return settings.user();
  }

  /**
   * The SSH port shared by all nodes: the configured one, or the free port picked when it was
   * taken.
   */
  public synchronized int port() {
    return sharedPort;
  }

  public Path estateDir() {
    return estateDir;
  }

  /** Directory of the fake host commands, first on every exec's PATH. */
  public Path sandboxBin() {
    return sandboxBin;
  }

  /**
   * The client private key, OpenSSH format, unencrypted (sshj loads it without BouncyCastle). Key
   * material: put it in a Secret, never in a log.
   */
  public String clientPrivateKey() {
    return KeyFiles.openSshPrivateKey(clientKey, "inplace-sandbox-client");
  }

  /** The client public key as an authorized_keys line. */
  public String clientPublicKey() {
    return KeyFiles.publicKeyLine(clientKey.getPublic()) + " inplace-sandbox-client";
  }

  /** One known_hosts line per node, in provisioning order. */
  public synchronized String knownHosts() {
    StringBuilder text = new StringBuilder();
    for (SandboxHost host : hosts.values()) {
      text.append(host.knownHostsLine()).append('\n');
    }
    return text.toString();
  }

  /** {@code <estateDir>/ssh/known_hosts}, rewritten whenever a node is added. */
  public Path knownHostsFile() {
    return sshDir.resolve("known_hosts");
  }

  @Override
  public synchronized void close() {
    if (reboots != null) {
      reboots.close();
    }
    for (SandboxHost host : hosts.values()) {
      host.stop();
    }
  }

  private SandboxHost newHost(String node, NodeRole role, Distribution distribution) {
    int octet = settings.firstHostOctet() + hosts.size();
    if (octet > 254) {
      throw new IllegalStateException("no loopback address left for node " + node);
    }
    Path root = hostsDir.resolve(node);
    // Ed25519: a node's key is generated in well under 1 ms, where RSA 2048 took ~1 s in the estate's
    // C1-only JVM, which made a 100-node estate take over 100 s to start (docs/benchmarks.md).
    Path hostKeyFile = sshDir.resolve("host-keys").resolve(node + "_ed25519_key");
    KeyPair hostKey = KeyFiles.loadOrGenerate(hostKeyFile, node, KeyFiles.Kind.ED25519);
    String address = "127.0.0." + octet;
    OpenSshServer openssh =
        settings.server() == HostServer.OPENSSH
            ? new OpenSshServer(
                node,
                address,
                root,
                hostKeyFile,
                settings.user(),
                opensshDir(),
                opensshDir().resolve("authorized_keys"),
                opensshDir().resolve("host-exec"),
                sandboxBin)
            : null;
    return new SandboxHost(
        node,
        role,
        distribution.defaultProfile().serviceFor(role),
        address,
        root,
        hostKey,
        settings.user(),
        clientKey.getPublic(),
        sandboxBin,
        openssh,
        sshFaults,
        sessions);
  }

  /** Binds the shared port; the first node picks a free one if the configured port is taken. */
  private void startOnSharedPort(SandboxHost host, boolean first) {
    try {
      host.start(sharedPort);
    } catch (IOException e) {
      LOG.warn(
          "node {}: port {} on {} is taken ({}), using a free port",
          host.name(),
          sharedPort,
          host.address(),
          e.toString());
      try {
        host.start(0);
      } catch (IOException again) {
        throw new UncheckedIOException("cannot start the SSH server of " + host.name(), again);
      }
    }
    if (first) {
      sharedPort = host.port();
    } else if (host.port() != sharedPort) {
      LOG.warn(
          "node {}: listens on port {}, not the shared port {}",
          host.name(),
          host.port(),
          sharedPort);
    }
  }

  private void installRelease(SandboxHost host, FakeRelease release) {
    if (release.distribution() == Distribution.KUBEADM) {
      installKubeadmRelease(host, release);
      return;
    }
    boolean k0s = release.distribution() == Distribution.K0S;
    Path root = host.root();
    HostProfile layout = release.distribution().defaultProfile();
    try {
      Files.createDirectories(root.resolve("usr/local/bin"));
      Path imagesDir = Files.createDirectories(root.resolve(relative(layout.imagesDir())));
      Path services = Files.createDirectories(root.resolve("run/sandbox/services"));
      copy(Path.of(release.binary().source()), root.resolve(relative(release.binary().installPath())), "rwxr-xr-x");
      // One image archive per version: drop the archives of other versions.
      try (DirectoryStream<Path> old =
          Files.newDirectoryStream(imagesDir, k0s ? "k0s-airgap-bundle-*" : "k3s-airgap-images-*.tar")) {
        for (Path file : old) {
          Files.delete(file);
        }
      }
      Artifact images = release.images();
      copy(Path.of(images.source()), root.resolve(relative(images.installPath())), "rw-r--r--");
      Path counter = services.resolve(host.service() + ".restarts");
      long restarts =
          Files.exists(counter) ? Long.parseLong(Files.readString(counter).trim()) + 1 : 0;
      writeAtomically(services.resolve(host.service()), "active\n");
      writeAtomically(counter, restarts + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot provision " + host.name(), e);
    }
  }

  /**
   * A kubeadm node: kubelet, kubeadm and kubectl in /usr/bin, the release's images archive kept in
   * the images dir, and on a control plane the static-pod manifests of the release and the etcd
   * certificates an etcdctl snapshot uses.
   */
  private void installKubeadmRelease(SandboxHost host, FakeRelease release) {
    Path root = host.root();
    HostProfile layout = HostProfile.kubeadmDefaults();
    try {
      for (Artifact binary : release.binaries()) {
        copy(Path.of(binary.source()), root.resolve(relative(binary.installPath())), "rwxr-xr-x");
      }
      Path imagesDir = Files.createDirectories(root.resolve(relative(layout.imagesDir())));
      try (DirectoryStream<Path> old = Files.newDirectoryStream(imagesDir, "kubernetes-images-*.tar")) {
        for (Path file : old) {
          Files.delete(file);
        }
      }
      copy(Path.of(release.images().source()), root.resolve(relative(release.images().installPath())), "rw-r--r--");
      if (host.role() == NodeRole.CONTROL_PLANE) {
        Path manifests = Files.createDirectories(root.resolve("etc/kubernetes/manifests"));
        for (Map.Entry<String, String> m : FakeReleases.staticPodManifests(release.version()).entrySet()) {
          writeAtomically(manifests.resolve(m.getKey()), m.getValue());
        }
        Path pki = Files.createDirectories(root.resolve("etc/kubernetes/pki/etcd"));
        for (String file : List.of("ca.crt", "server.crt", "server.key")) {
          writeAtomically(pki.resolve(file), "fake " + file + " of the sandbox's etcd\n");
        }
      }
      Path services = Files.createDirectories(root.resolve("run/sandbox/services"));
      Path counter = services.resolve(host.service() + ".restarts");
      long restarts = Files.exists(counter) ? Long.parseLong(Files.readString(counter).trim()) + 1 : 0;
      writeAtomically(services.resolve(host.service()), "active\n");
      writeAtomically(counter, restarts + "\n");
    } catch (IOException e) {
      throw new UncheckedIOException("cannot provision " + host.name(), e);
    }
  }

  private void installSandboxBin() {
    try {
      Files.createDirectories(sandboxBin);
      for (String name : SANDBOX_BIN) {
        try (InputStream in = SandboxHosts.class.getResourceAsStream("/sandbox-bin/" + name)) {
          if (in == null) {
            throw new IllegalStateException("resource /sandbox-bin/" + name + " is missing");
          }
          Path tmp = sandboxBin.resolve(name + ".tmp");
          Files.copy(in, tmp, StandardCopyOption.REPLACE_EXISTING);
          Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
          Files.move(
              tmp,
              sandboxBin.resolve(name),
              StandardCopyOption.REPLACE_EXISTING,
              StandardCopyOption.ATOMIC_MOVE);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot install sandbox commands into " + sandboxBin, e);
    }
  }

  private Path opensshDir() {
    return estateDir.resolve("openssh");
  }

  /** The client key every node's sshd accepts, and the session wrapper all of them run. */
  private void installOpenSshFiles() {
    try {
      Files.createDirectories(opensshDir());
      writeAtomically(opensshDir().resolve("authorized_keys"), clientPublicKey() + "\n");
      String steps =
          FaultInjector.SCRIPT_STEPS.stream()
              .map(dev.inplace.workflows.api.UpgradeStep::cliName)
              .sorted()
              .reduce((a, b) -> a + " " + b)
              .orElse("");
      try (InputStream in = SandboxHosts.class.getResourceAsStream("/openssh/host-exec")) {
        if (in == null) {
          throw new IllegalStateException("resource /openssh/host-exec is missing");
        }
        String text =
            new String(in.readAllBytes(), StandardCharsets.UTF_8).replace("{{script_steps}}", steps);
        Path exec = opensshDir().resolve("host-exec");
        writeAtomically(exec, text);
        Files.setPosixFilePermissions(exec, PosixFilePermissions.fromString("rwxr-xr-x"));
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the OpenSSH files under " + opensshDir(), e);
    }
  }

  private static void copy(Path from, Path to, String permissions) throws IOException {
    Files.createDirectories(to.getParent());
    Path tmp = to.resolveSibling(to.getFileName() + ".provision.tmp");
    Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString(permissions));
    Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static void writeAtomically(Path file, String text) throws IOException {
    Path tmp = file.resolveSibling(file.getFileName() + ".provision.tmp");
    Files.writeString(tmp, text, StandardCharsets.UTF_8);
    Files.move(tmp, file, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private static String relative(String absolutePath) {
    return absolutePath.substring(1);
  }

  private void writeKnownHosts() {
    try {
      Path tmp = knownHostsFile().resolveSibling("known_hosts.tmp");
      Files.writeString(tmp, knownHosts(), StandardCharsets.US_ASCII);
      Files.move(
          tmp,
          knownHostsFile(),
          StandardCopyOption.REPLACE_EXISTING,
          StandardCopyOption.ATOMIC_MOVE);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + knownHostsFile(), e);
    }
  }
}
