package dev.inplace.sandbox.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoRun;
import dev.inplace.sandbox.demo.DemoSummary;
import dev.inplace.sandbox.demo.NodeOutcome;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.release.FakeRelease;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.client.TemporalConnection;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.sandbox.EmbeddedTemporal;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./inplace demo --mode extension} end to end: the worker's HTTPS extension (mutual TLS), the
 * simulated CAPI controllers calling it, the NodeUpgrade runs on the embedded Temporal server, real
 * SSH hosts and the kubelet simulator. Asserts what CAPI and the hosts hold afterwards.
 */
@Timeout(180)
class ExtensionDemoIT {
  @TempDir Path dir;

  private interface Check {
    void verify(Estate estate, DemoSummary summary, String output) throws Exception;
  }

  private void demo(Check check, String... args) throws Exception {
    DemoOptions options = DemoOptions.parse(args);
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (Estate estate = Estate.create(dir.resolve("estate"), options.estateSpec())) {
      for (DemoOptions.Fault fault : options.faults()) {
        estate.arm(fault.node(), fault.step());
      }
      Path artifactCache = dir.resolve("cache");
      DemoSummary summary;
      try (TemporalConnection temporal = EmbeddedTemporal.start();
          InplaceWorker worker =
              InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, estate.workerManagement(), artifactCache,
                    estate.artifactPolicy())) {
        summary = new DemoRun(estate, temporal.client(), WorkflowIds.TASK_QUEUE, options,
            new PrintStream(printed, true, StandardCharsets.UTF_8)).run();
      }
      check.verify(estate, summary, printed.toString(StandardCharsets.UTF_8));
    }
  }

  @Test
  void everyNodeIsUpgradedThroughTheHooksAndCapisMarkersAreCleared() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(3, summary.nodes(), output);
          assertEquals(3, summary.upgraded(), output);
          assertTrue(output.contains("CanUpdateMachine edge-1-cp-0: in place, patches machine:replace /spec/version"), output);
          assertTrue(output.contains("CanUpdateMachineSet edge-1-workers-7f9c8 -> "), output);
          assertTrue(output.contains("UpdateMachine edge-1-worker-1: Success retryAfterSeconds=0"), output);

          String to = estate.spec().toVersion();
          FakeRelease release = estate.releases().release(to);
          for (Estate.EstateNode node : estate.nodes()) {
            Node n = estate.workload().nodes().withName(node.name()).get();
            assertEquals(to, n.getStatus().getNodeInfo().getKubeletVersion(), node.name());
            assertFalse(Boolean.TRUE.equals(n.getSpec().getUnschedulable()), node.name() + " must be schedulable");
            GenericKubernetesResource machine = object(estate, CapiResources.MACHINE, node.machine());
            assertEquals(to, ((Map<?, ?>) machine.getAdditionalProperties().get("spec")).get("version"));
            Map<?, ?> nodeInfo = (Map<?, ?>) ((Map<?, ?>) machine.getAdditionalProperties().get("status")).get("nodeInfo");
            assertEquals(to, nodeInfo.get("kubeletVersion"), "Machine status mirrors the Node");
            assertNoMarkers(machine);
            assertNoMarkers(object(estate, CapiObjects.METAL3_MACHINE, node.machine()));
            Path binary = estate.hostRoot(node.name()).resolve("usr/local/bin/k3s");
            assertEquals(release.binary().sha256(), sha256(binary), node.name() + " runs the new binary");
          }
          GenericKubernetesResource oldSet = object(estate, CapiResources.MACHINE_SET, Estate.machineSetOf("edge-1-workers"));
          assertEquals(0, ((Number) ((Map<?, ?>) oldSet.getAdditionalProperties().get("spec")).get("replicas")).intValue());
          assertNoMarkers(oldSet);
          String newSet = object(estate, CapiResources.MACHINE, "edge-1-worker-0").getMetadata().getLabels()
              .get("cluster.x-k8s.io/set-name");
          assertTrue(newSet.startsWith("edge-1-workers-") && !newSet.equals(oldSet.getMetadata().getName()), newSet);
        },
        "--mode", "extension", "--control-planes", "1", "--pools", "1", "--workers", "2", "--max-unavailable", "2",
        "--binary-size-mib", "2", "--ready-timeout", "10");
  }

  @Test
  void aNodeWhoseRestartFailsIsRolledBackAndReportedAsAFailureNeverAsDone() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(2, summary.nodes(), output);
          assertEquals(1, summary.upgraded(), output);
          NodeOutcome failed = summary.results().stream().filter(o -> o.node().equals("worker-0")).findFirst().orElseThrow();
          assertEquals(NodeOutcome.ROLLED_BACK, failed.result(), output);
          assertEquals("ServiceRestartFailed", failed.reason(), output);
          assertEquals("restart", failed.failedStep(), output);
          assertTrue(output.contains("UpdateMachine edge-1-worker-0: Failure"), output);
          assertFalse(output.contains("UpdateMachine edge-1-worker-0: Success retryAfterSeconds=0"), output);
          Node n = estate.workload().nodes().withName("worker-0").get();
          assertEquals(estate.spec().fromVersion(), n.getStatus().getNodeInfo().getKubeletVersion());
          // CAPI keeps the update pending: the markers stay until UpdateMachine reports done.
          GenericKubernetesResource machine = object(estate, CapiResources.MACHINE, "edge-1-worker-0");
          assertTrue(machine.getMetadata().getAnnotations().containsKey(Markers.PENDING_HOOKS));
        },
        "--mode", "extension", "--control-planes", "1", "--pools", "1", "--workers", "1",
        "--binary-size-mib", "2", "--ready-timeout", "5", "--fail", "worker-0:restart");
  }

  private static void assertNoMarkers(GenericKubernetesResource object) {
    Map<String, String> annotations = object.getMetadata().getAnnotations() == null ? Map.of() : object.getMetadata().getAnnotations();
    for (String key : List.of(Markers.IN_PROGRESS, Markers.PENDING_HOOKS, Markers.MOVE_TO,
        Markers.RECEIVE_FROM, Markers.PENDING_ACK)) {
      assertFalse(annotations.containsKey(key), object.getMetadata().getName() + " still carries " + key);
    }
  }

  private static GenericKubernetesResource object(Estate estate, ResourceDefinitionContext type, String name) {
    return estate.management().genericKubernetesResources(type).inNamespace(Estate.NAMESPACE).withName(name).get();
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
