package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.release.FakeRelease;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.client.TemporalConnection;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.workflows.api.Artifact;
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
import org.junit.jupiter.api.io.TempDir;

/**
 * The demo end to end: the in-process Temporal test server, the sandbox API servers, one MINA SSH
 * server per node running the rendered scripts with bash, the kubelet simulator and the worker's
 * watcher. Asserts the final state of every Node, Machine, CAPI object and host file.
 */
class DemoIT {
  private static final String CR_NAME = Estate.CLUSTER + "-control-plane";

  @TempDir Path dir;

  /** The demo's run, with the estate still open so its final state can be inspected. */
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
  void upgradesTheClusterThroughItsResourcesAndSkipsTheNodeWhoseRestartFails() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(7, summary.nodes(), output);
          assertEquals(6, summary.upgraded(), output);
          assertEquals(1, summary.failed(), output);
          assertEquals(1, summary.rolledBack(), output);
          NodeOutcome failed = outcome(summary, "worker-b-1");
          assertEquals("restart", failed.failedStep());
          assertEquals("ServiceRestartFailed", failed.reason());
          assertControlPlaneFinishedBeforeAnyWorkerStarted(estate);

          assertNodesAndHosts(estate, List.of("worker-b-1"));
          String from = estate.spec().fromVersion();
          String to = estate.spec().toVersion();
          assertEquals(to, spec(estate, CapiResources.KTHREES_CONTROL_PLANE, Estate.CONTROL_PLANE).get("version"));
          assertEquals(to, templateVersion(estate, CapiResources.MACHINE_DEPLOYMENT, "edge-1-workers-a"));
          assertEquals(to, templateVersion(estate, CapiResources.MACHINE_SET, Estate.machineSetOf("edge-1-workers-a")));
          // A pool with a node left behind is not recorded as upgraded: no template claims what is not true.
          assertEquals(from, templateVersion(estate, CapiResources.MACHINE_DEPLOYMENT, "edge-1-workers-b"));
          assertEquals(from, templateVersion(estate, CapiResources.MACHINE_SET, Estate.machineSetOf("edge-1-workers-b")));
          for (String pool : estate.pools()) {
            assertNoInplaceAnnotations(estate, CapiResources.MACHINE_DEPLOYMENT, pool);
          }
          assertNoInplaceAnnotations(estate, CapiResources.KTHREES_CONTROL_PLANE, Estate.CONTROL_PLANE);

          ControlPlaneUpgrade cr =
              estate.management().resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE).withName(CR_NAME).get();
          assertEquals(UpgradePhase.SUCCEEDED, cr.getStatus().getPhase());
          assertTrue(cr.getStatus().getEtcdSnapshot().startsWith("inplace-pre-"), cr.getStatus().getEtcdSnapshot());
          assertTrue(Files.list(estate.hostRoot("cp-0").resolve("var/lib/rancher/k3s/server/db/snapshots"))
              .anyMatch(f -> f.getFileName().toString().startsWith(cr.getStatus().getEtcdSnapshot())), "snapshot file on cp-0");
        },
        "--control-planes", "3", "--pools", "2", "--workers", "2", "--binary-size-mib", "2",
        "--fail", "worker-b-1:restart", "--on-failure", "skip", "--ready-timeout", "10");
  }

  @Test
  void retryingAHaltedNodeAfterItsFaultIsClearedUpgradesEveryNode() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(3, summary.nodes(), output);
          assertEquals(3, summary.upgraded(), output);
          assertEquals(0, summary.failed(), output);
          assertTrue(output.contains("worker-1 failed at verify (VerifyTimeout); clearing the fault and retrying"), output);
          assertNodesAndHosts(estate, List.of());
          assertEquals(estate.spec().toVersion(), templateVersion(estate, CapiResources.MACHINE_DEPLOYMENT, "edge-1-workers"));
        },
        "--mode", "workflows", "--control-planes", "1", "--pools", "1", "--workers", "2", "--binary-size-mib", "2",
        "--fail", "worker-1:verify", "--on-failure", "retry", "--ready-timeout", "5");
  }

  @Test
  void upgradesAKubeadmClusterAndRollsBackTheWorkerWhoseKubeadmUpgradeFails() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(5, summary.nodes(), output);
          assertEquals(4, summary.upgraded(), output);
          assertEquals(1, summary.rolledBack(), output);
          NodeOutcome failed = outcome(summary, "worker-1");
          assertEquals("upgrade", failed.failedStep());
          assertEquals("KubeadmUpgradeFailed", failed.reason());
          FakeRelease from = estate.releases().release(estate.spec().fromVersion());
          FakeRelease to = estate.releases().release(estate.spec().toVersion());
          for (Estate.EstateNode node : estate.nodes()) {
            boolean back = node.name().equals("worker-1");
            FakeRelease expected = back ? from : to;
            Node n = estate.workload().nodes().withName(node.name()).get();
            assertEquals(expected.version(), n.getStatus().getNodeInfo().getKubeletVersion(), node.name());
            assertFalse(Boolean.TRUE.equals(n.getSpec().getUnschedulable()), node.name() + " must be schedulable");
            assertEquals(expected.version(), spec(estate, CapiResources.MACHINE, node.machine()).get("version"));
            assertNoInplaceAnnotations(estate, CapiResources.MACHINE, node.machine());
            Path root = estate.hostRoot(node.name());
            for (String binary : List.of("kubeadm", "kubelet", "kubectl")) {
              assertEquals(expected.binary(binary).sha256(), sha256(root.resolve("usr/bin/" + binary)), node.name() + " " + binary);
            }
          }
          // kubeadm upgrade apply on the first control plane only, with the UpgradeConfiguration and
          // the CoreDNS migration checks ignored; upgrade node elsewhere; none on the rolled-back worker.
          String first = Files.readString(estate.hostRoot("cp-0").resolve("var/log/kubeadm-phases.log"));
          assertTrue(first.contains("upgrade plan v1.31.2 config=yes ignore=CoreDNSUnsupportedPlugins,CoreDNSMigration"), first);
          assertTrue(first.contains("upgrade apply v1.31.2 config=yes"), first);
          for (String other : List.of("cp-1", "cp-2", "worker-0")) {
            String phases = Files.readString(estate.hostRoot(other).resolve("var/log/kubeadm-phases.log"));
            assertTrue(phases.contains("upgrade node v1.31.2") && !phases.contains("apply"), other + ": " + phases);
          }
          assertFalse(Files.exists(estate.hostRoot("worker-1").resolve("var/log/kubeadm-phases.log")));
          for (String cp : List.of("cp-0", "cp-1", "cp-2")) {
            Path manifests = estate.hostRoot(cp).resolve("etc/kubernetes/manifests");
            assertTrue(Files.readString(manifests.resolve("kube-apiserver.yaml")).contains("kube-apiserver:v1.31.2"), cp);
            assertTrue(Files.readString(manifests.resolve("etcd.yaml")).contains("etcd:3.5.15-0"), cp);
            assertTrue(Files.readString(estate.hostRoot(cp).resolve("var/log/ctr-imports.log"))
                .contains("k8s.io " + to.images().installPath()), cp + " imported the images before the upgrade");
          }
          ControlPlaneUpgrade cr =
              estate.management().resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE).withName(CR_NAME).get();
          assertEquals(UpgradePhase.SUCCEEDED, cr.getStatus().getPhase());
          assertTrue(Files.exists(estate.hostRoot("cp-0").resolve(
              "var/lib/inplace/etcd-snapshots/" + cr.getStatus().getEtcdSnapshot() + ".db")), "etcdctl snapshot on cp-0");

          // KubeadmControlPlane bookkeeping: each control plane's KubeadmConfig, InfraMachine and
          // Machine annotation match the KubeadmControlPlane, whose version is recorded at the end.
          Map<?, ?> kcp = spec(estate, CapiResources.KUBEADM_CONTROL_PLANE, Estate.CONTROL_PLANE);
          assertEquals(to.version(), kcp.get("version"));
          assertNoInplaceAnnotations(estate, CapiResources.KUBEADM_CONTROL_PLANE, Estate.CONTROL_PLANE);
          Object clusterConfiguration = ((Map<?, ?>) kcp.get("kubeadmConfigSpec")).get("clusterConfiguration");
          ResourceDefinitionContext metal3 = new ResourceDefinitionContext.Builder().withGroup("infrastructure.cluster.x-k8s.io")
              .withVersion("v1beta1").withKind("Metal3Machine").withPlural("metal3machines").withNamespaced(true).build();
          for (String cp : List.of("cp-0", "cp-1", "cp-2")) {
            String machine = Estate.CLUSTER + "-" + cp;
            assertEquals(clusterConfiguration, spec(estate, CapiResources.KUBEADM_CONFIG, machine).get("clusterConfiguration"), machine);
            assertEquals(cp.equals("cp-0"), spec(estate, CapiResources.KUBEADM_CONFIG, machine).get("initConfiguration") != null);
            assertEquals(Estate.CONTROL_PLANE + "-v2",
                object(estate, metal3, machine).getMetadata().getAnnotations().get("cluster.x-k8s.io/cloned-from-name"));
            String annotation = object(estate, CapiResources.MACHINE, machine).getMetadata().getAnnotations()
                .get("controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration");
            assertEquals(clusterConfiguration, new com.fasterxml.jackson.databind.ObjectMapper().readValue(annotation, Map.class));
          }
        },
        "--distribution", "kubeadm", "--control-planes", "3", "--pools", "1", "--workers", "2", "--binary-size-mib", "1",
        "--fail", "worker-1:upgrade", "--on-failure", "skip", "--ready-timeout", "10");
  }

  @Test
  void upgradesAK0smotronClusterAndRollsBackTheWorkerWhoseNewK0sDoesNotStart() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(7, summary.nodes(), output);
          assertEquals(6, summary.upgraded(), output);
          assertEquals(1, summary.rolledBack(), output);
          assertEquals("restart", outcome(summary, "worker-b-1").failedStep());
          FakeRelease from = estate.releases().release(estate.spec().fromVersion());
          FakeRelease to = estate.releases().release(estate.spec().toVersion());
          for (Estate.EstateNode node : estate.nodes()) {
            boolean back = node.name().equals("worker-b-1");
            FakeRelease expected = back ? from : to;
            Node n = estate.workload().nodes().withName(node.name()).get();
            // A k0s kubelet reports +k0s, not the release's +k0s.N.
            assertEquals(expected.version().replace("+k0s.0", "+k0s"), n.getStatus().getNodeInfo().getKubeletVersion(), node.name());
            assertFalse(Boolean.TRUE.equals(n.getSpec().getUnschedulable()), node.name() + " must be schedulable");
            assertEquals(expected.version(), spec(estate, CapiResources.MACHINE, node.machine()).get("version"));
            Path root = estate.hostRoot(node.name());
            assertEquals(expected.binary().sha256(), sha256(root.resolve("usr/local/bin/k0s")), node.name() + " k0s");
            assertEquals(from.binary().sha256(), sha256(root.resolve("var/lib/inplace/backup/k0s.prev")), node.name() + " previous k0s kept");
            String service = node.role() == dev.inplace.workflows.api.NodeRole.CONTROL_PLANE ? "k0scontroller" : "k0sworker";
            assertEquals("active", Files.readString(root.resolve("run/sandbox/services/" + service)).trim(), node.name());
          }
          ControlPlaneUpgrade cr =
              estate.management().resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE).withName(CR_NAME).get();
          assertEquals(UpgradePhase.SUCCEEDED, cr.getStatus().getPhase());
          Path backups = estate.hostRoot("cp-0").resolve("var/lib/inplace/k0s-backups/" + cr.getStatus().getEtcdSnapshot());
          try (var files = Files.list(backups)) {
            assertTrue(files.anyMatch(f -> f.getFileName().toString().startsWith("k0s_backup_")), "k0s backup on cp-0");
          }
          assertFalse(Files.exists(estate.hostRoot("cp-1").resolve("var/lib/inplace/k0s-backups")), "one backup, on the first controller");
          assertEquals(to.version(), spec(estate, CapiResources.K0S_CONTROL_PLANE, Estate.CONTROL_PLANE).get("version"));
          assertNoInplaceAnnotations(estate, CapiResources.K0S_CONTROL_PLANE, Estate.CONTROL_PLANE);
          assertEquals(to.version(), k0sTemplateVersion(estate, "edge-1-workers-a"), "an upgraded pool's template pins the target");
          assertEquals(from.version(), k0sTemplateVersion(estate, "edge-1-workers-b"), "a pool with a rolled-back worker keeps its version");
        },
        "--distribution", "k0s", "--control-planes", "3", "--pools", "2", "--workers", "2", "--binary-size-mib", "1",
        "--fail", "worker-b-1:restart", "--on-failure", "skip", "--ready-timeout", "10");
  }

  /**
   * issue 15's Kairos demo, with its failure: from the hosts' own A/B state (the fake kairos-agent's
   * files, which the kubelet simulator and the boots write, not the product's report): every node
   * booted the new image once, and the failing worker was booted back into its fallback image and is
   * Ready and schedulable on its previous version.
   */
  @Test
  void upgradesKairosHostsByRebootingIntoTheNewImageAndBootsTheFailingWorkerBackIntoItsFallback() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(3, summary.nodes(), output);
          assertEquals(2, summary.upgraded(), output);
          assertEquals(1, summary.rolledBack(), output);
          assertEquals("verify", outcome(summary, "worker-1").failedStep(), output);
          String from = estate.spec().fromVersion();
          String to = estate.spec().toVersion();
          Artifact fromImage = estate.releases().osImage(from);
          Artifact toImage = estate.releases().osImage(to);
          for (Estate.EstateNode node : estate.nodes()) {
            boolean back = node.name().equals("worker-1");
            Node n = estate.workload().nodes().withName(node.name()).get();
            assertEquals(back ? from : to, n.getStatus().getNodeInfo().getKubeletVersion(), node.name());
            assertFalse(Boolean.TRUE.equals(n.getSpec().getUnschedulable()), node.name() + " must be schedulable");
            assertTrue(n.getStatus().getConditions().stream()
                .anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True")), node.name() + " Ready");
            assertEquals(back ? from : to, spec(estate, CapiResources.MACHINE, node.machine()).get("version"));
            assertNoInplaceAnnotations(estate, CapiResources.MACHINE, node.machine());

            Path kairos = estate.hostRoot(node.name()).resolve(".sandbox/kairos");
            assertEquals(toImage.sha256(), Files.readString(kairos.resolve("active")).strip(), node.name() + " active image");
            assertEquals(fromImage.sha256(), Files.readString(kairos.resolve("passive")).strip(),
                node.name() + " the previous image kept as the fallback");
            assertEquals(back ? "passive_boot" : "active_boot", Files.readString(kairos.resolve("booted")).strip(),
                node.name() + " booted entry");
            // One reboot into the new image; the failing worker one more, into its fallback.
            assertEquals(back ? "2" : "1", Files.readString(kairos.resolve("boots")).strip(), node.name() + " boots");
          }
          assertEquals("fallback", Files.readString(estate.hostRoot("worker-1").resolve(".sandbox/kairos/default")).strip(),
              "the fallback entry stays selected for the next boots");
        },
        "--os", "kairos", "--control-planes", "1", "--pools", "1", "--workers", "2", "--binary-size-mib", "1",
        "--fail", "worker-1:verify", "--on-failure", "skip", "--ready-timeout", "10");
  }

  /**
   * issue 13's single-node cluster: one k3s server on SQLite is upgraded; its snapshot is a copy of
   * the datastore file (no embedded etcd to ask), and its drain is skipped, which the resource says.
   */
  @Test
  void upgradesASingleServerOnSqliteWithACopyOfItsDatastoreAndNoDrain() throws Exception {
    demo(
        (estate, summary, output) -> {
          assertEquals(1, summary.nodes(), output);
          assertEquals(1, summary.upgraded(), output);
          assertNodesAndHosts(estate, List.of());
          ControlPlaneUpgrade cr =
              estate.management().resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE).withName(CR_NAME).get();
          assertEquals(UpgradePhase.SUCCEEDED, cr.getStatus().getPhase(), output);
          var drainSkipped = cr.getStatus().condition("DrainSkipped").orElseThrow();
          assertEquals("True", drainSkipped.getStatus());
          assertEquals("SingleNodeCluster", drainSkipped.getReason());
          Path db = estate.hostRoot("cp-0").resolve("var/lib/rancher/k3s/server/db");
          assertFalse(Files.exists(db.resolve("etcd")), "a single server runs on SQLite");
          try (var snapshots = Files.list(db.resolve("snapshots"))) {
            assertTrue(snapshots.map(f -> f.getFileName().toString())
                .anyMatch(f -> f.startsWith(cr.getStatus().getEtcdSnapshot()) && f.endsWith(".sqlite.tar")),
                "a copy of state.db on cp-0");
          }
        },
        "--control-planes", "1", "--workers", "0", "--binary-size-mib", "1");
  }

  private static Object k0sTemplateVersion(Estate estate, String pool) {
    Map<?, ?> template = (Map<?, ?>) spec(estate, CapiResources.K0S_WORKER_CONFIG_TEMPLATE, pool).get("template");
    return ((Map<?, ?>) template.get("spec")).get("version");
  }

  /** From the resources' node tables: the last control plane finished before the first worker started. */
  private static void assertControlPlaneFinishedBeforeAnyWorkerStarted(Estate estate) {
    var cp = estate.management().resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE).withName(CR_NAME).get();
    var workers = estate.management().resources(dev.inplace.worker.crd.WorkersUpgrade.class)
        .inNamespace(Estate.NAMESPACE).withName(Estate.CLUSTER + "-workers").get();
    java.time.Instant lastControlPlane = cp.getStatus().getNodes().stream()
        .map(n -> java.time.Instant.parse(n.getFinished())).max(java.util.Comparator.naturalOrder()).orElseThrow();
    java.time.Instant firstWorker = workers.getStatus().getNodes().stream()
        .filter(n -> n.getStarted() != null)
        .map(n -> java.time.Instant.parse(n.getStarted())).min(java.util.Comparator.naturalOrder()).orElseThrow();
    assertTrue(!firstWorker.isBefore(lastControlPlane),
        "a worker started at " + firstWorker + " before the control plane finished at " + lastControlPlane);
  }

  /** Every Node Ready, schedulable, at its expected version, with Machine and host files to match. */
  private static void assertNodesAndHosts(Estate estate, List<String> rolledBack) throws Exception {
    FakeRelease from = estate.releases().release(estate.spec().fromVersion());
    FakeRelease to = estate.releases().release(estate.spec().toVersion());
    for (Estate.EstateNode node : estate.nodes()) {
      boolean back = rolledBack.contains(node.name());
      String expected = back ? from.version() : to.version();
      Node n = estate.workload().nodes().withName(node.name()).get();
      assertEquals(expected, n.getStatus().getNodeInfo().getKubeletVersion(), node.name());
      assertFalse(Boolean.TRUE.equals(n.getSpec().getUnschedulable()), node.name() + " must be schedulable");
      assertTrue(n.getStatus().getConditions().stream().anyMatch(c -> c.getType().equals("Ready") && c.getStatus().equals("True")));
      // JSON merge patch removes the key on a real API server; the mock keeps it with a null value.
      assertNull(annotations(n.getMetadata().getAnnotations()).get("upgrade.inplace.dev/cordoned-by"), node.name());

      assertEquals(expected, spec(estate, CapiResources.MACHINE, node.machine()).get("version"), node.machine());
      assertNoInplaceAnnotations(estate, CapiResources.MACHINE, node.machine());

      Path root = estate.hostRoot(node.name());
      Artifact binary = (back ? from : to).binary();
      assertEquals(binary.sha256(), sha256(root.resolve("usr/local/bin/k3s")), node.name() + " binary");
      assertEquals(!back, Files.exists(root.resolve(to.images().installPath().substring(1))), node.name() + " new images");
    }
  }

  private static void assertNoInplaceAnnotations(Estate estate, ResourceDefinitionContext type, String name) {
    Map<String, String> annotations = annotations(object(estate, type, name).getMetadata().getAnnotations());
    for (String key : List.of("cluster.x-k8s.io/skip-remediation", "cluster.x-k8s.io/paused", "upgrade.inplace.dev/paused-by")) {
      assertNull(annotations.get(key), name + " still carries " + key);
    }
  }

  private static Map<String, String> annotations(Map<String, String> annotations) {
    return annotations == null ? Map.of() : annotations;
  }

  private static GenericKubernetesResource object(Estate estate, ResourceDefinitionContext type, String name) {
    return estate.management().genericKubernetesResources(type).inNamespace(Estate.NAMESPACE).withName(name).get();
  }

  private static Map<?, ?> spec(Estate estate, ResourceDefinitionContext type, String name) {
    return (Map<?, ?>) object(estate, type, name).getAdditionalProperties().get("spec");
  }

  private static Object templateVersion(Estate estate, ResourceDefinitionContext type, String name) {
    Map<?, ?> template = (Map<?, ?>) spec(estate, type, name).get("template");
    return ((Map<?, ?>) template.get("spec")).get("version");
  }

  private static NodeOutcome outcome(DemoSummary summary, String node) {
    return summary.results().stream().filter(o -> o.node().equals(node)).findFirst().orElseThrow();
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
