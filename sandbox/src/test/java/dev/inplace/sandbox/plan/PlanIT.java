package dev.inplace.sandbox.plan;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.kube.ApiRequest;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.PlanWorkflow;
import dev.inplace.workflows.api.PlanWorkflow.PlanRequest;
import dev.inplace.workflows.api.PlanWorkflow.PlanScope;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.UpgradePlan;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.client.WorkflowOptions;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A plan against the simulated estate (kubeadm, real SSH hosts running the inspect script, the
 * worker as in production) changes nothing: every host file is byte for byte the same, the audit
 * journal included (the inspect script is marked read-only and is the one script that does not
 * journal itself, docs/reliability.md); Machines and Nodes are unchanged, and the worker sent the
 * management API server reads only.
 */
class PlanIT {
  @TempDir Path dir;

  @Test
  void aKubeadmPlanInspectsEveryHostAndChangesNoHostAndNoObject() throws Exception {
    DemoOptions options = DemoOptions.parse("--distribution", "kubeadm", "--workers", "2");
    try (Estate estate = Estate.create(dir, options.estateSpec())) {
      String to = options.estateSpec().toVersion();
      ReleaseCatalogue.Release release = ReleaseCatalogue.parse(Files.readString(estate.catalogue()),
          estate.catalogue().toString()).find(to, Distribution.KUBEADM, "amd64");
      NodeUpgradeTemplate template = new NodeUpgradeTemplate(Distribution.KUBEADM, to, release.artifacts(),
          Distribution.KUBEADM.defaultProfile(), estate.ssh(), new DrainOptions(60, true, false, PdbBlockedAction.FAIL, false),
          60, 0, "amd64");
      Map<String, String> hostsBefore = hostDigests(estate);
      Map<String, List<String>> journalsBefore = journals(estate);
      Map<String, String> objectsBefore = objectVersions(estate);

      UpgradePlan plan;
      try (TemporalConnection temporal = EmbeddedTemporal.start();
          InplaceWorker worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, estate.workerManagement(),
              dir.resolve("cache"), estate.artifactPolicy())) {
        PlanWorkflow stub = temporal.client().newWorkflowStub(PlanWorkflow.class, WorkflowOptions.newBuilder()
            .setWorkflowId(WorkflowIds.plan(Estate.NAMESPACE, Estate.CLUSTER, to, "it"))
            .setTaskQueue(WorkflowIds.TASK_QUEUE).build());
        plan = stub.plan(new PlanRequest(estate.cluster(), template, PlanScope.CLUSTER, List.of(), "1", null, true));
      }

      assertTrue(plan.hostsInspected());
      assertFalse(plan.refused(), plan.findings().toString());
      int nodes = estate.nodes().size();
      assertEquals(nodes, plan.findings().stream().filter(f -> f.reason().equals("HostInspected")).count(),
          plan.findings().toString());
      assertTrue(plan.scripts().stream().anyMatch(s -> s.name().equals("upgrade-apply") && s.text().contains("mode='apply'")));
      assertEquals("control-plane", plan.waves().get(0).group());

      assertEquals(hostsBefore, hostDigests(estate), "a plan changes no file on any host");
      assertEquals(journalsBefore, journals(estate), "the read-only inspection writes no journal line either");
      assertEquals(objectsBefore, objectVersions(estate), "a plan changes no Machine, Node or control-plane object");
      Set<ApiRequest> writes = estate.workerRequests().stream()
          .filter(r -> !Set.of("get", "list", "watch").contains(r.verb()))
          .collect(Collectors.toSet());
      assertEquals(Set.of(), writes, "the worker only read the management cluster");
    }
  }

  private static final String JOURNAL = "var/log/inplace/journal";

  /** Each host's audit journal, line by line (empty when none was written yet). */
  private static Map<String, List<String>> journals(Estate estate) throws IOException {
    Map<String, List<String>> journals = new TreeMap<>();
    for (Estate.EstateNode node : estate.nodes()) {
      Path journal = estate.hostRoot(node.name()).resolve(JOURNAL);
      journals.put(node.name(), Files.exists(journal) ? Files.readAllLines(journal) : List.of());
    }
    return journals;
  }

  /** Every file under every host root but the journal (path, sha256; "dir" for directories). */
  private static Map<String, String> hostDigests(Estate estate) throws Exception {
    Map<String, String> digests = new TreeMap<>();
    for (Estate.EstateNode node : estate.nodes()) {
      Path root = estate.hostRoot(node.name());
      try (Stream<Path> files = Files.walk(root)) {
        for (Path p : files.sorted().toList()) {
          String relative = root.relativize(p).toString().replace('\\', '/');
          if (relative.equals(JOURNAL) || JOURNAL.startsWith(relative + "/")) {
            continue; // checked line by line
          }
          String key = node.name() + ":" + root.relativize(p);
          digests.put(key, Files.isRegularFile(p) ? sha256(p) : "dir");
        }
      }
    }
    return digests;
  }

  private static Map<String, String> objectVersions(Estate estate) {
    Map<String, String> versions = new TreeMap<>();
    var mgmt = estate.management();
    for (String kind : List.of("machines", "machinedeployments", "machinesets", "clusters")) {
      mgmt.genericKubernetesResources(new io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext.Builder()
              .withGroup("cluster.x-k8s.io").withVersion("v1beta2").withPlural(kind).withNamespaced(true).build())
          .inNamespace(Estate.NAMESPACE).list().getItems()
          .forEach(o -> versions.put(kind + "/" + o.getMetadata().getName(), o.getMetadata().getResourceVersion()));
    }
    // The kubelet simulator may refresh Node status on its own: compare what a run would change.
    for (io.fabric8.kubernetes.api.model.Node n : estate.workload().nodes().list().getItems()) {
      versions.put("node/" + n.getMetadata().getName(), "spec=" + n.getSpec() + " annotations="
          + new TreeMap<>(n.getMetadata().getAnnotations() == null ? Map.of() : n.getMetadata().getAnnotations())
          + " kubelet=" + n.getStatus().getNodeInfo().getKubeletVersion());
    }
    return versions;
  }

  private static String sha256(Path file) throws IOException {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    } catch (java.security.NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }
}
