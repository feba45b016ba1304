package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.client.TemporalConnection;
import dev.inplace.client.UpgradeRuns;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.estate.ClusterClassObjects;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowStub;
import io.temporal.failure.ApplicationFailure;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A ClusterClass cluster ({@code --cluster-class}: {@code spec.topology} and a ClusterClass in the
 * estate) end to end: the custom resources are refused at intake and runs started by hand, as the
 * CLI starts them, are refused by their first read, both with {@code TopologyManagedCluster}, and
 * no host file, Node or CAPI object changes.
 */
class ClusterClassIT {
  @TempDir Path dir;

  @Test
  void aClusterClassClusterIsRefusedThroughTheResourcesAndByHandAndNothingChanges() throws Exception {
    DemoOptions options =
        DemoOptions.parse("--cluster-class", "--control-planes", "1", "--pools", "1", "--workers", "1");
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    try (Estate estate = Estate.create(dir.resolve("estate"), options.estateSpec())) {
      KubernetesClient management = estate.management();
      assertTrue(management.genericKubernetesResources(CapiResources.CLUSTER_CLASS).inNamespace(Estate.NAMESPACE)
          .withName(ClusterClassObjects.CLASS).get() != null, "the estate holds the ClusterClass");
      Map<String, String> before = state(estate);

      try (TemporalConnection temporal = EmbeddedTemporal.start();
          InplaceWorker worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE,
              estate.workerManagement(), dir.resolve("cache"), estate.artifactPolicy())) {
        // The custom resources: refused at intake.
        DemoSummary summary = new DemoRun(estate, temporal.client(), WorkflowIds.TASK_QUEUE, options,
            new PrintStream(printed, true, StandardCharsets.UTF_8)).run();
        String output = printed.toString(StandardCharsets.UTF_8);
        assertEquals(0, summary.upgraded(), output);
        assertEquals(summary.nodes(), summary.notStarted(), output);
        assertRefused(management.resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE)
            .withName(Estate.CLUSTER + "-control-plane").get().getStatus(), output);
        assertRefused(management.resources(WorkersUpgrade.class).inNamespace(Estate.NAMESPACE)
            .withName(Estate.CLUSTER + "-workers").get().getStatus(), output);

        // Started by hand, as `inplace upgrade control-plane|workers` does: refused by the first read.
        ReleaseCatalogue.Release release = ReleaseCatalogue.parse(Files.readString(estate.catalogue()),
            estate.catalogue().toString()).find(options.to(), options.distribution(), "amd64");
        NodeUpgradeTemplate template = new NodeUpgradeTemplate(options.distribution(), options.to(),
            release.artifacts(), options.distribution().defaultProfile(), estate.ssh(),
            new DrainOptions(20, true, false, PdbBlockedAction.FAIL, false), 20, 0, release.arch());
        ControlPlaneUpgradeWorkflow cp = UpgradeRuns.startControlPlane(temporal.client(), WorkflowIds.TASK_QUEUE,
            new ControlPlaneUpgradeRequest(estate.cluster(), template, 0, null));
        assertRefusedRun(WorkflowStub.fromTyped(cp));
        WorkersUpgradeWorkflow workers = UpgradeRuns.startWorkers(temporal.client(), WorkflowIds.TASK_QUEUE,
            new WorkersUpgradeRequest(estate.cluster(), estate.pools().get(0), template, "1", FailurePolicy.HALT,
                0, 0, null, null));
        assertRefusedRun(WorkflowStub.fromTyped(workers));
      }
      assertEquals(before, state(estate), "nothing changed on any host, Node or CAPI object");
    }
  }

  private static void assertRefused(UpgradeStatus status, String output) {
    UpgradeCondition failed = status.getConditions().stream()
        .filter(c -> UpgradeCondition.FAILED.equals(c.getType())).findFirst().orElseThrow();
    assertEquals("True", failed.getStatus(), output);
    assertEquals(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, failed.getReason(), output);
    assertTrue(status.getMessage().contains("ClusterClass " + ClusterClassObjects.CLASS), status.getMessage());
  }

  private static void assertRefusedRun(WorkflowStub run) {
    WorkflowFailedException e =
        assertThrows(WorkflowFailedException.class, () -> run.getResult(60, TimeUnit.SECONDS, Object.class));
    ApplicationFailure cause = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, cause.getType(), cause.getOriginalMessage());
    assertTrue(cause.getOriginalMessage().contains("ClusterClass " + ClusterClassObjects.CLASS),
        cause.getOriginalMessage());
  }

  /** Every host file's sha256, every Node's spec and annotations, every CAPI object's resourceVersion. */
  private static Map<String, String> state(Estate estate) throws Exception {
    Map<String, String> state = new TreeMap<>();
    for (Estate.EstateNode node : estate.nodes()) {
      Path root = estate.hostRoot(node.name());
      try (Stream<Path> files = Files.walk(root)) {
        for (Path f : files.filter(Files::isRegularFile).toList()) {
          state.put("host " + node.name() + ":" + root.relativize(f), HexFormat.of().formatHex(
              MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(f))));
        }
      }
    }
    for (Node n : estate.workload().nodes().list().getItems()) {
      state.put("node " + n.getMetadata().getName(),
          n.getSpec().getUnschedulable() + " " + n.getMetadata().getAnnotations());
    }
    for (ResourceDefinitionContext type : List.of(CapiResources.CLUSTER, CapiResources.CLUSTER_CLASS,
        CapiResources.MACHINE, CapiResources.MACHINE_SET, CapiResources.MACHINE_DEPLOYMENT,
        CapiResources.KTHREES_CONTROL_PLANE)) {
      for (GenericKubernetesResource r : estate.management().genericKubernetesResources(type)
          .inNamespace(Estate.NAMESPACE).list().getItems()) {
        state.put(type.getKind() + " " + r.getMetadata().getName(), r.getMetadata().getResourceVersion()
            + " " + r.getMetadata().getAnnotations());
      }
    }
    assertTrue(state.keySet().stream().anyMatch(k -> k.startsWith("host ")), state.keySet().toString());
    return state;
  }
}
