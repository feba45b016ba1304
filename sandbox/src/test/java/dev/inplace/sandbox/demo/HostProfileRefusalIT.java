package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.OptionalLong;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./inplace demo --bin-dir /run/evil} end to end (issue 34, H1): the resources name an
 * administrator's InplaceHostProfile whose binDir is outside the distribution's directories; both
 * are refused with {@code InvalidRequest} naming the allowed ones, no SSH session reaches any host
 * and no host file changes.
 */
class HostProfileRefusalIT {
  @TempDir Path dir;

  @Test
  void aHostProfileWithABinDirOutsideTheLayoutIsRefusedBeforeAnySshSession() throws Exception {
    DemoOptions options = DemoOptions.parse("--bin-dir", "/run/evil", "--control-planes", "1", "--pools", "1",
        "--workers", "1", "--binary-size-mib", "1");
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (Estate estate = Estate.create(dir.resolve("estate"), options.estateSpec())) {
      Map<String, String> before = hostFiles(estate);
      DemoSummary summary;
      try (TemporalConnection temporal = EmbeddedTemporal.start();
          InplaceWorker worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE,
              estate.workerManagement(), dir.resolve("cache"), estate.artifactPolicy())) {
        summary = new DemoRun(estate, temporal.client(), WorkflowIds.TASK_QUEUE, options,
            new PrintStream(printed, true, StandardCharsets.UTF_8)).run();
      }
      String output = printed.toString(StandardCharsets.UTF_8);
      assertEquals(0, summary.upgraded(), output);
      assertEquals(summary.nodes(), summary.notStarted(), output);
      String expected = "spec.hostProfile.name: InplaceHostProfile demo-layout: binDir /run/evil is not a k3s"
          + " directory; allowed: /usr/local/bin, /opt/bin";
      assertRefused(estate.management().resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE)
          .withName(DemoResources.CONTROL_PLANE).get().getStatus(), expected);
      assertRefused(estate.management().resources(WorkersUpgrade.class).inNamespace(Estate.NAMESPACE)
          .withName(DemoResources.WORKERS).get().getStatus(), expected);
      assertTrue(output.contains("[" + UpgradeFailures.INVALID_REQUEST + "] (" + expected + ")"), output);
      assertEquals(OptionalLong.of(0), estate.sshSessions(), "no SSH session reached any host");
      assertEquals(before, hostFiles(estate), "no host file changed");
    }
  }

  private static void assertRefused(UpgradeStatus status, String expected) {
    UpgradeCondition failed = status.condition(UpgradeCondition.FAILED).orElseThrow();
    assertEquals("True", failed.getStatus());
    assertEquals(UpgradeFailures.INVALID_REQUEST, failed.getReason());
    assertEquals(expected, status.getMessage());
  }

  /** Every file under every host's root, with its size and last change. */
  private static Map<String, String> hostFiles(Estate estate) throws Exception {
    Map<String, String> files = new TreeMap<>();
    for (Estate.EstateNode node : estate.nodes()) {
      Path root = estate.hostRoot(node.name());
      try (Stream<Path> all = Files.walk(root)) {
        for (Path f : all.filter(Files::isRegularFile).toList()) {
          files.put(node.name() + ":" + root.relativize(f), Files.size(f) + " " + Files.getLastModifiedTime(f));
        }
      }
    }
    assertTrue(files.size() > 0, "the hosts have files");
    return files;
  }
}
