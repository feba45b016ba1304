package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.SandboxSlot;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scanner against a real OpenSSH sshd holding an Ed25519, an ECDSA and an RSA host key, with
 * OpenSSH's own ssh-keyscan and ssh-keygen as the oracle: the same keys, the same known_hosts
 * types, the same fingerprints.
 */
class HostKeyScannerIT {
  private static final String ADDRESS = "127.0.0." + (45 + SandboxSlot.hostOctetOffset());
  @TempDir static Path dir;
  private static Process sshd;
  private static int port;

  @BeforeAll
  static void startSshdWithThreeHostKeys() throws Exception {
    List<String> config = new ArrayList<>(List.of("ListenAddress " + ADDRESS + ":" + (port = freePort()),
        "PidFile " + dir.resolve("sshd.pid"), "UsePAM no", "PasswordAuthentication no", "KbdInteractiveAuthentication no"));
    for (String type : List.of("ed25519", "ecdsa", "rsa")) {
      run("ssh-keygen", "-q", "-t", type, "-N", "", "-f", dir.resolve("ssh_host_" + type + "_key").toString());
      config.add("HostKey " + dir.resolve("ssh_host_" + type + "_key"));
    }
    Path file = Files.writeString(dir.resolve("sshd_config"), String.join("\n", config) + "\n");
    Files.createDirectories(Path.of("/run/sshd"));
    Path log = dir.resolve("sshd.log");
    sshd = new ProcessBuilder("/usr/sbin/sshd", "-D", "-e", "-f", file.toString()).redirectErrorStream(true)
        .redirectOutput(log.toFile()).start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(15);
    while (!Files.readString(log).contains("Server listening on")) {
      assertTrue(sshd.isAlive() && System.nanoTime() < deadline, Files.readString(log));
      Thread.sleep(20);
    }
  }

  @AfterAll
  static void stopSshd() {
    if (sshd != null) {
      sshd.destroyForcibly();
    }
  }

  @Test
  void itReadsTheSameKeysAsSshKeyscanWithTheFingerprintsSshKeygenPrints() throws Exception {
    List<HostKey> scanned = new HostKeyScanner(Duration.ofSeconds(5)).scan(ADDRESS, port);

    Set<String> ours = new TreeSet<>(scanned.stream().map(k -> k.knownHostsLine(ADDRESS, port)).toList());
    Set<String> keyscan = new TreeSet<>(run("ssh-keyscan", "-p", String.valueOf(port), "-t", "ed25519,ecdsa,rsa", ADDRESS)
        .lines().filter(l -> !l.startsWith("#")).toList());
    assertEquals(keyscan, ours);
    assertEquals(List.of("ssh-ed25519", "ecdsa-sha2-nistp256", "ssh-rsa"), scanned.stream().map(HostKey::type).toList());
    for (HostKey key : scanned) {
      String type = switch (key.type()) {
        case "ssh-ed25519" -> "ed25519";
        case "ssh-rsa" -> "rsa";
        default -> "ecdsa";
      };
      String keygen = run("ssh-keygen", "-lf", dir.resolve("ssh_host_" + type + "_key.pub").toString());
      assertEquals(keygen.split("\\s+")[1], key.fingerprint(), key.type());
    }
  }

  private static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getByName(ADDRESS))) {
      return socket.getLocalPort();
    }
  }

  private static String run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(30, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), String.join(" ", command) + ": " + out);
    return out;
  }
}
