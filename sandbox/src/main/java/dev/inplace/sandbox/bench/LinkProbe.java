package dev.inplace.sandbox.bench;

import dev.inplace.activities.ssh.HostConnection;
import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.activities.support.KubernetesSecretSource;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.stack.RemoteEstate;
import dev.inplace.sandbox.stack.StackLayout;
import dev.inplace.workflows.api.HostAccess;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The link rates of {@code ./inplace bench --e2e}: plain {@code scp} and the product's SFTP upload of
 * the artifact to the same node's sshd. One untimed SFTP upload first warms the client's code up; then
 * each of {@link #ROUNDS} rounds times one scp and one SFTP upload, alternating which goes first
 * ({@link #scpFirst}), so that neither side always sees the other's after-effects. Every copy lands
 * on an absent file, is checked whole and deleted. One copy each way swung 0.82-1.18x from run to
 * run on a loaded 2-core machine; the figures take the median of the rounds ({@link E2eFigures}).
 */
final class LinkProbe {
  static final int ROUNDS = 3;

  private static final String REMOTE_PROBE = "/inplace-bench-link.bin";

  /** Seconds of each copy, one per round, in round order. */
  record Samples(List<Double> scpSeconds, List<Double> sftpSeconds) {
    Samples {
      scpSeconds = List.copyOf(scpSeconds);
      sftpSeconds = List.copyOf(sftpSeconds);
    }
  }

  private final RemoteEstate estate;
  private final Estate.EstateNode node;
  private final Path artifact;
  private final Path ssh;
  private final Path copied;

  LinkProbe(RemoteEstate estate, StackLayout layout, Estate.EstateNode node, Path artifact) {
    this.estate = estate;
    this.node = node;
    this.artifact = artifact;
    this.ssh = layout.estateDir().resolve("ssh");
    this.copied = layout.estateDir().resolve("hosts").resolve(node.name()).resolve(REMOTE_PROBE.substring(1));
  }

  /** Round 1 (index 0) starts with scp, round 2 with SFTP, and so on. */
  static boolean scpFirst(int round) {
    return round % 2 == 0;
  }

  Samples measure(PrintStream out) throws IOException, InterruptedException {
    HostAccess host = new HostAccess(estate.cluster().namespace(), node.name(), node.address(), estate.ssh());
    SshConnector connector = new SshConnector(new KubernetesSecretSource(estate.management()), SshClientOptions.defaults());
    try {
      sftp(connector, host, "untimed SFTP warm-up");
      List<Double> scp = new ArrayList<>();
      List<Double> sftp = new ArrayList<>();
      for (int round = 0; round < ROUNDS; round++) {
        if (scpFirst(round)) {
          scp.add(scp(round));
          sftp.add(sftp(connector, host, "SFTP, round " + (round + 1)));
        } else {
          sftp.add(sftp(connector, host, "SFTP, round " + (round + 1)));
          scp.add(scp(round));
        }
        out.printf("link to %s, round %d (%s first): scp %.3fs, SFTP (product) %.3fs for %d MiB%n", node.name(),
            round + 1, scpFirst(round) ? "scp" : "SFTP", scp.get(round), sftp.get(round), Files.size(artifact) >> 20);
      }
      return new Samples(scp, sftp);
    } finally {
      connector.closeIdle();
      Files.deleteIfExists(copied);
    }
  }

  /** One plain scp, checked and deleted; its time includes connecting and authenticating. */
  private double scp(int round) throws IOException, InterruptedException {
    long t0 = System.nanoTime();
    List<String> scp = List.of("scp", "-q", "-o", "BatchMode=yes", "-o", "StrictHostKeyChecking=yes",
        "-o", "UserKnownHostsFile=" + ssh.resolve("known_hosts"), "-i", ssh.resolve("id_rsa").toString(),
        "-P", Integer.toString(estate.ssh().port()), artifact.toString(),
        estate.ssh().user() + "@" + node.address() + ":" + REMOTE_PROBE);
    Process p = new ProcessBuilder(scp).redirectErrorStream(true).start();
    String said = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.waitFor() != 0) {
      throw new IllegalStateException("scp to " + node.name() + " failed: " + said.trim());
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    checkCopied("scp, round " + (round + 1));
    return seconds;
  }

  /** One upload on a fresh connection (connect and authenticate included, as scp's time includes them). */
  private double sftp(SshConnector connector, HostAccess host, String copy) throws IOException {
    connector.closeIdle();
    long t0 = System.nanoTime();
    try (HostConnection connection = connector.open(host)) {
      connection.upload(artifact, REMOTE_PROBE, 0, sent -> { });
    }
    double seconds = (System.nanoTime() - t0) / 1e9;
    checkCopied(copy);
    return seconds;
  }

  private void checkCopied(String copy) throws IOException {
    long size = Files.size(artifact);
    if (!Files.exists(copied) || Files.size(copied) != size) {
      throw new IllegalStateException("the link probe (" + copy + ") did not land whole in " + copied + ": "
          + (Files.exists(copied) ? Files.size(copied) + " of " + size + " bytes" : "absent"));
    }
    Files.delete(copied);
  }
}
