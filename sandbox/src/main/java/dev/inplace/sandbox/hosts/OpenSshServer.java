package dev.inplace.sandbox.hosts;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.lang.ProcessBuilder.Redirect;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One node's real OpenSSH server: {@code sshd -D -e -f <config>} on the node's loopback address,
 * with the node's pinned host key and the estate's client key. Its sshd_config sets the node root
 * variable (SetEnv) and runs every session through {@code host-exec} (ForceCommand), which serves
 * SFTP chrooted into the node root, so the product sees the same host as on MINA.
 *
 * <p>Needs root (sshd logs users in, and SFTP is chrooted) and Debian's openssh-server.
 */
final class OpenSshServer {
  private static final Logger LOG = LoggerFactory.getLogger(OpenSshServer.class);
  static final Path SSHD = Path.of("/usr/sbin/sshd");
  static final Path SFTP_SERVER = Path.of("/usr/lib/openssh/sftp-server");
  private static final Duration START_TIMEOUT = Duration.ofSeconds(15);
  private static final Pattern LDD_PATH = Pattern.compile("(/\\S+)");

  private final String node;
  private final String address;
  private final Path root;
  private final Path hostKey;
  private final String user;
  private final Path dir;
  private final Path authorizedKeys;
  private final Path hostExec;
  private final Path sandboxBin;
  private volatile Process process;
  private volatile int port;

  OpenSshServer(
      String node,
      String address,
      Path root,
      Path hostKey,
      String user,
      Path opensshDir,
      Path authorizedKeys,
      Path hostExec,
      Path sandboxBin) {
    this.node = node;
    this.address = address;
    this.root = root;
    this.hostKey = hostKey;
    this.user = user;
    this.dir = opensshDir.resolve(node);
    this.authorizedKeys = authorizedKeys;
    this.hostExec = hostExec;
    this.sandboxBin = sandboxBin;
  }

  /** Fails with what to do when sshd cannot serve the sandbox here. */
  static void requireUsable() {
    if (!Files.isExecutable(SSHD) || !Files.isExecutable(SFTP_SERVER)) {
      throw new IllegalStateException(
          "--hosts openssh needs OpenSSH's sshd and sftp-server, not found at "
              + SSHD
              + ": apt-get install -y openssh-server");
    }
    if (!"root".equals(System.getProperty("user.name"))) {
      throw new IllegalStateException(
          "--hosts openssh runs one sshd per node as root (it logs users in and chroots SFTP into"
              + " each node root); run it as root, or use --hosts mina");
    }
  }

  int port() {
    return port;
  }

  boolean isUp() {
    Process p = process;
    return p != null && p.isAlive();
  }

  /** Starts sshd on {@code requestedPort} (0: a free port); fails if it cannot listen there. */
  synchronized void start(int requestedPort) throws IOException {
    if (isUp()) {
      return;
    }
    int p = requestedPort == 0 ? freePort() : requestedPort;
    Files.createDirectories(dir);
    Files.createDirectories(Path.of("/run/sshd")); // sshd's privilege separation directory
    prepareChroot();
    Path config = dir.resolve("sshd_config");
    Files.writeString(config, config(p), StandardCharsets.UTF_8);
    Path log = dir.resolve("sshd.log");
    Files.deleteIfExists(log);
    Process started =
        new ProcessBuilder(SSHD.toString(), "-D", "-e", "-f", config.toString())
            .redirectErrorStream(true)
            .redirectOutput(Redirect.appendTo(log.toFile()))
            .redirectInput(Redirect.from(new java.io.File("/dev/null")))
            .start();
    long deadline = System.nanoTime() + START_TIMEOUT.toNanos();
    while (!listening(log)) {
      if (!started.isAlive() || System.nanoTime() > deadline) {
        kill(started);
        throw new IOException(
            "sshd of node " + node + " did not start on " + address + ":" + p + ": " + tail(log));
      }
      sleep(20);
    }
    process = started;
    port = p;
    Runtime.getRuntime().addShutdownHook(new Thread(() -> kill(started), "sshd-stop-" + node));
    LOG.info("node {}: OpenSSH sshd up on {}:{} (pid {})", node, address, p, started.pid());
  }

  /** Stops sshd and every session it runs. */
  synchronized void stop() {
    Process p = process;
    process = null;
    if (p != null) {
      kill(p);
    }
  }

  private String config(int p) {
    return String.join(
        "\n",
        "# sshd of sandbox node " + node + ", written by the sandbox.",
        "ListenAddress " + address + ":" + p,
        "HostKey " + hostKey,
        "PidFile " + dir.resolve("sshd.pid"),
        "AuthorizedKeysFile " + authorizedKeys,
        "AllowUsers " + user,
        "PermitRootLogin prohibit-password",
        "PubkeyAuthentication yes",
        "PasswordAuthentication no",
        "KbdInteractiveAuthentication no",
        "UsePAM no",
        "StrictModes no",
        "UseDNS no",
        "PrintMotd no",
        "PermitUserEnvironment no",
        "MaxStartups 200",
        "MaxSessions 64",
        "Subsystem sftp " + SFTP_SERVER,
        "ForceCommand " + hostExec,
        // HOME is the node root before the user's shell starts: sshd runs every session through the
        // user's shell, and bash sources ~/.bashrc for sshd; this machine's root .bashrc (pyenv init)
        // cost 1.1 s and ~100 processes per session (docs/benchmarks.md). A node has none.
        "SetEnv \"HOME="
            + root
            + "\" \"INPLACE_HOST_ROOT="
            + root
            + "\" \"INPLACE_NODE="
            + node
            + "\" \"INPLACE_SANDBOX_BIN="
            + sandboxBin
            + "\"",
        "");
  }

  /**
   * sftp-server and what it needs inside the node root: its loader and libraries (run through the
   * loader, so nothing lands in the node's /lib), a /dev/null and the user's passwd line.
   */
  private void prepareChroot() throws IOException {
    Path sftp = Files.createDirectories(root.resolve(".sandbox/sftp"));
    for (String library : sharedLibraries()) {
      Path from = Path.of(library);
      String name = from.getFileName().toString().startsWith("ld-") ? "ld.so" : from.getFileName().toString();
      copy(from, sftp.resolve(name));
    }
    copy(SFTP_SERVER, sftp.resolve("sftp-server"));
    Path dev = Files.createDirectories(root.resolve("dev"));
    if (!Files.exists(dev.resolve("null"))) {
      Files.createFile(dev.resolve("null"));
    }
    Path etc = Files.createDirectories(root.resolve("etc"));
    Files.writeString(etc.resolve("passwd"), passwdLine(), StandardCharsets.UTF_8);
  }

  private static List<String> sharedLibraries() throws IOException {
    String out = run("ldd", SFTP_SERVER.toString());
    return out.lines()
        .filter(l -> !l.contains("linux-vdso"))
        .map(
            l -> {
              Matcher m = LDD_PATH.matcher(l.contains("=>") ? l.substring(l.indexOf("=>")) : l);
              return m.find() ? m.group(1) : null;
            })
        .filter(p -> p != null)
        .toList();
  }

  private String passwdLine() throws IOException {
    String line = run("getent", "passwd", user).trim();
    if (line.isEmpty()) {
      throw new IOException("no passwd entry for " + user);
    }
    return line + "\n";
  }

  private static String run(String... command) throws IOException {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    try (InputStream in = p.getInputStream()) {
      String out = new String(in.readAllBytes(), StandardCharsets.UTF_8);
      if (p.waitFor() != 0) {
        throw new IOException(String.join(" ", command) + " failed: " + out.trim());
      }
      return out;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted running " + command[0], e);
    }
  }

  private static void copy(Path from, Path to) throws IOException {
    if (Files.exists(to) && Files.size(to) == Files.size(from)) {
      return;
    }
    Path tmp = to.resolveSibling(to.getFileName() + ".tmp");
    Files.copy(from, tmp, StandardCopyOption.REPLACE_EXISTING);
    Files.setPosixFilePermissions(tmp, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.move(tmp, to, StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
  }

  private int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(address))) {
      return socket.getLocalPort();
    }
  }

  private static boolean listening(Path log) {
    try {
      return Files.exists(log) && Files.readString(log).contains("Server listening on");
    } catch (IOException | UncheckedIOException e) {
      return false;
    }
  }

  private static String tail(Path log) {
    try {
      List<String> lines = Files.readAllLines(log);
      return String.join(" | ", lines.subList(Math.max(0, lines.size() - 5), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  /** sshd and its sessions (the sessions are its descendants). */
  private static void kill(Process p) {
    List<ProcessHandle> children = p.descendants().toList();
    p.destroyForcibly();
    children.forEach(ProcessHandle::destroyForcibly);
    try {
      p.waitFor(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static void sleep(long millis) throws IOException {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new java.io.InterruptedIOException("interrupted waiting for sshd");
    }
  }
}
