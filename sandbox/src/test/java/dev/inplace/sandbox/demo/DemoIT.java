package dev.inplace.sandbox.demo;

import dev.inplace.activities.capi.CapiResources;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.release.FakeRelease;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.TemporalConnection;
import dev.inplace.worker.WorkerConfig;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo scenario end to end: the in-process Temporal test server, the sandbox API servers, one
 * MINA SSH server per node running the rendered scripts with bash, and the kubelet simulator.
 */
class DemoIT {

  @TempDir Path dir;

  @Test
  void upgradesEveryNodeAndRollsBackTheOneWhoseRestartFails() throws Exception {
    DemoOptions options = DemoOptions.parse("--workers", "3", "--binary-size-mib", "2", "--fail", "worker-1:restart");
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (Estate estate = Estate.create(dir.resolve("estate"), options.estateSpec())) {
      estate.arm("worker-1", dev.inplace.workflows.api.UpgradeStep.RESTART);
      WorkerConfig config = WorkerConfig.embedded(dir.resolve("cache"));
      DemoSummary summary;
      try (TemporalConnection temporal = TemporalConnection.open(config);
          InplaceWorker worker =
              InplaceWorker.start(temporal.client(), config.taskQueue(), estate.management(), config.artifactCache())) {
        summary = new DemoRun(estate, temporal.client(), config.taskQueue(), options,
            new PrintStream(printed, true, StandardCharsets.UTF_8)).run();
      }
      String output = printed.toString(StandardCharsets.UTF_8);

      assertEquals(4, summary.nodes(), output);
      assertEquals(3, summary.upgraded(), output);
      assertEquals(1, summary.failed(), output);
      assertEquals(1, summary.rolledBack(), output);
      NodeOutcome failed = summary.results().stream().filter(o -> o.node().equals("worker-1")).findFirst().orElseThrow();
      assertEquals("restart", failed.failedStep());
      assertEquals("ServiceRestartFailed", failed.reason());
      assertTrue(output.indexOf("cp-0") < output.indexOf("worker-0"), "control plane goes first:\n" + output);

      FakeRelease from = estate.releases().release(options.from());
      FakeRelease to = estate.releases().release(options.to());
      for (Estate.EstateNode node : estate.nodes()) {
        boolean rolledBack = node.name().equals("worker-1");
        String expected = rolledBack ? options.from() : options.to();
        Node n = estate.workload().nodes().withName(node.name()).get();
        assertEquals(expected, n.getStatus().getNodeInfo().getKubeletVersion(), node.name());
        assertFalse(Boolean.TRUE.equals(n.getSpec().getUnschedulable()), node.name() + " must be schedulable");
        assertTrue(n.getStatus().getConditions().stream().anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True")));
        // JSON merge patch removes the key on a real API server; the mock keeps it with a null value.
        assertEquals(null, n.getMetadata().getAnnotations() == null ? null
            : n.getMetadata().getAnnotations().get("upgrade.inplace.dev/cordoned-by"), node.name());

        GenericKubernetesResource machine =
            estate.management().genericKubernetesResources(CapiResources.MACHINE).inNamespace(Estate.NAMESPACE).withName(node.machine()).get();
        assertEquals(expected, ((Map<?, ?>) machine.getAdditionalProperties().get("spec")).get("version"), node.machine());

        Path root = estate.hostRoot(node.name());
        Artifact binary = (rolledBack ? from : to).binary();
        assertEquals(binary.sha256(), sha256(root.resolve("usr/local/bin/k3s")), node.name() + " binary");
        Path newImages = root.resolve(to.images().installPath().substring(1));
        assertEquals(!rolledBack, Files.exists(newImages), node.name() + " image archive of the target");
      }
      assertNotEquals(from.binary().sha256(), to.binary().sha256());
    }
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
