package dev.inplace.sandbox.hosts;

import java.io.Closeable;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plays the reboots of sandbox Kairos nodes. The fake {@code reboot} leaves a request file in the
 * node's root; for each one this stops the node's SSH server (open sessions drop), marks its service
 * down, waits the downtime, boots the node with {@code sandbox-bin/kairos-boot} (boot entry, boot
 * assessment, a new boot ID), starts the service again through the fake {@code systemctl} (the
 * kubelet simulator sees a restart) and brings SSH back on the same address, port and host key,
 * unless the "host never comes back" fault is armed.
 */
final class RebootSimulator implements Closeable {
  private static final Logger LOG = LoggerFactory.getLogger(RebootSimulator.class);
  static final String REQUEST = ".sandbox/reboot-requested";
  private static final Duration POLL = Duration.ofMillis(100);
  private static final Duration BOOT_TIMEOUT = Duration.ofSeconds(30);

  private final Supplier<List<SandboxHost>> hosts;
  private final Path sandboxBin;
  private volatile Duration downtime;
  private final Set<String> rebooting = ConcurrentHashMap.newKeySet();
  private final ScheduledExecutorService poller =
      Executors.newSingleThreadScheduledExecutor(r -> daemon(r, "reboot-simulator"));
  private final ExecutorService boots = Executors.newCachedThreadPool(r -> daemon(r, "reboot-simulator-boot"));

  RebootSimulator(Supplier<List<SandboxHost>> hosts, Path sandboxBin, Duration downtime) {
    this.hosts = hosts;
    this.sandboxBin = sandboxBin;
    this.downtime = downtime;
    poller.scheduleWithFixedDelay(this::poll, POLL.toMillis(), POLL.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** How long a rebooting node stays unreachable from now on. */
  void downtime(Duration d) {
    this.downtime = d;
  }

  private void poll() {
    for (SandboxHost host : hosts.get()) {
      Path request = host.root().resolve(REQUEST);
      if (Files.exists(request) && rebooting.add(host.name())) {
        boots.submit(() -> {
          try {
            reboot(host, request);
          } catch (IOException | RuntimeException e) {
            LOG.warn("node {}: simulated reboot failed: {}", host.name(), e.toString());
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } finally {
            rebooting.remove(host.name());
          }
        });
      }
    }
  }

  private void reboot(SandboxHost host, Path request) throws IOException, InterruptedException {
    Files.deleteIfExists(request);
    LOG.info("node {}: rebooting", host.name());
    host.stop();
    Path services = Files.createDirectories(host.root().resolve("run/sandbox/services"));
    Path tmp = services.resolve(host.service() + ".reboot.tmp");
    Files.writeString(tmp, "inactive\n", StandardCharsets.UTF_8);
    Files.move(tmp, services.resolve(host.service()), StandardCopyOption.REPLACE_EXISTING, StandardCopyOption.ATOMIC_MOVE);
    Thread.sleep(downtime.toMillis());
    String boot = run(host, "kairos-boot");
    LOG.info("node {}: {}", host.name(), boot.strip().replace('\n', ' '));
    run(host, "systemctl", "start", host.service());
    if (boot.contains("ssh=down")) {
      LOG.info("node {}: does not come back (fault armed)", host.name());
      return;
    }
    host.start(host.port());
    LOG.info("node {}: back after reboot on {}:{}", host.name(), host.address(), host.port());
  }

  /** Runs a sandbox command as the node would; its output (a failing systemctl start is allowed). */
  private String run(SandboxHost host, String command, String... args) throws IOException, InterruptedException {
    List<String> line = new java.util.ArrayList<>();
    line.add(sandboxBin.resolve(command).toString());
    line.addAll(List.of(args));
    ProcessBuilder builder = new ProcessBuilder(line).directory(host.root().toFile()).redirectErrorStream(true);
    builder.environment().put("INPLACE_HOST_ROOT", host.root().toString());
    builder.environment().put("PATH", sandboxBin + ":/usr/bin:/bin");
    Process p = builder.start();
    String out;
    try (InputStream in = p.getInputStream()) {
      out = new String(in.readNBytes(64 * 1024), StandardCharsets.UTF_8);
    }
    if (!p.waitFor(BOOT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)) {
      p.destroyForcibly();
      throw new IOException(command + " did not finish on " + host.name());
    }
    if (p.exitValue() != 0) {
      LOG.info("node {}: {} exited {}: {}", host.name(), command, p.exitValue(), out.strip());
    }
    return out;
  }

  @Override
  public void close() {
    poller.shutdownNow();
    boots.shutdownNow();
  }

  private static Thread daemon(Runnable r, String name) {
    Thread t = new Thread(r, name);
    t.setDaemon(true);
    return t;
  }
}
