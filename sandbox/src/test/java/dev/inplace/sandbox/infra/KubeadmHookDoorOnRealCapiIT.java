package dev.inplace.sandbox.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.hosts.BinaryStart;
import dev.inplace.sandbox.hosts.KubeletSimulator;
import dev.inplace.sandbox.hosts.SandboxHosts;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.testbed.CapiManagers;
import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestCa;
import dev.inplace.testbed.TestbedBinaries;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.extension.CapiExtension;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.Base64;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import org.awaitility.Awaitility;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 31, the hook door driven by real Cluster API: CAPI v1.13.6's core, KubeadmControlPlane and
 * kubeadm bootstrap managers (InPlaceUpdates, RuntimeSDK) call inplace's runtime extension
 * (the worker's HookServer, mutual TLS with the management plane's CA, registered by an
 * ExtensionConfig with url + caBundle and deploy/extension's namespaceSelector) when the user
 * changes the KubeadmControlPlane's and the MachineDeployment's version; the extension's
 * NodeUpgrade runs (the real activities, on an in-process Temporal server) upgrade every node over
 * SSH, and CAPI marks every Machine up to date without creating or deleting one.
 *
 * <p>Real: etcd, both kube-apiservers, kube-controller-manager, the three CAPI managers, the
 * ExtensionConfig discovery, the hook calls over mutual TLS, the {@code <cluster>-kubeconfig} Secret
 * KCP generated (the activities reach the workload cluster through it). Simulated: each Machine's
 * host (a sandbox SSH server per Machine on its own 127.0.0.N, running the sandbox's stand-ins for
 * kubelet, kubeadm and systemctl against a directory), and the kubelet (the KubeletSimulator writes
 * each Node's status from the kubelet binary installed on its host). The worker's activities use the
 * management plane's administrator client, not the worker's RBAC (RbacCoverageIT judges that).
 */
@Timeout(1200)
class KubeadmHookDoorOnRealCapiIT {
  static final String NS = "fleet";
  static final String CLUSTER = "edge-1";
  static final String FROM = "v1.30.6";
  static final String TO = "v1.30.7";
  static final String KCP_NAME = CLUSTER + "-control-plane";
  static final String MD_NAME = CLUSTER + "-md-0";
  static final ResourceDefinitionContext MACHINES = core("Machine", "machines");
  static final ResourceDefinitionContext MACHINE_SETS = core("MachineSet", "machinesets");
  static final ResourceDefinitionContext MD = core("MachineDeployment", "machinedeployments");
  static final ResourceDefinitionContext KCP = new ResourceDefinitionContext.Builder().withGroup("controlplane.cluster.x-k8s.io")
      .withVersion("v1beta2").withKind("KubeadmControlPlane").withPlural("kubeadmcontrolplanes").withNamespaced(true).build();
  static final ResourceDefinitionContext EXTENSION_CONFIGS = new ResourceDefinitionContext.Builder()
      .withGroup("runtime.cluster.x-k8s.io").withVersion("v1beta2").withKind("ExtensionConfig").withPlural("extensionconfigs")
      .withNamespaced(false).build();

  @TempDir static Path dir;
  static KubeControlPlane management;
  static KubeControlPlane workload;
  static CapiManagers capi;
  static KubernetesClient mgmt;
  static KubernetesClient wl;
  static FakeReleases releases;
  static SandboxHosts hosts;
  static KubeletSimulator kubelets;
  static SandboxInfraProvider provider;
  static TemporalConnection temporal;
  static InplaceWorker worker;
  static CapiExtension extension;

  @BeforeAll
  static void startTestBed() throws Exception {
    TestbedBinaries binaries = TestbedBinaries.locate();
    management = KubeControlPlane.start("management", dir.resolve("management"), binaries);
    workload = KubeControlPlane.start("workload", dir.resolve("workload"), binaries);
    capi = CapiManagers.start(management, dir.resolve("capi"), binaries, true);
    mgmt = KubeadmClusterOnRealCapiIT.client(management.adminKubeconfig());
    wl = KubeadmClusterOnRealCapiIT.client(workload.adminKubeconfig());

    Path estate = dir.resolve("estate");
    releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small(), Distribution.KUBEADM, HostOs.STANDARD);
    releases.add(FROM);
    releases.add(TO);
    Path catalogue = releases.writeCatalogue();
    hosts = SandboxHosts.open(estate, SandboxHosts.Settings.defaults());
    kubelets = KubeletSimulator.start(wl, List.of(), new KubeletSimulator.Settings(Duration.ofSeconds(1), KubeletSimulator.Settings.POLL));

    // What an operator puts next to the cluster for inplace: the opt-in label, the SSH key, the
    // catalogue (the known_hosts Secret follows each host the provider boots).
    mgmt.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS)
        .addToLabels("upgrade.inplace.dev/in-place", "true").endMetadata().build()).serverSideApply();
    mgmt.secrets().inNamespace(NS).resource(new SecretBuilder().withMetadata(new ObjectMetaBuilder().withName(CLUSTER + "-ssh-key")
        .withNamespace(NS).build()).withType("Opaque").withData(Map.of(SshSettings.PRIVATE_KEY_DATA_KEY,
            Base64.getEncoder().encodeToString(hosts.clientPrivateKey().getBytes(StandardCharsets.UTF_8)))).build()).create();
    mgmt.resource(CatalogueReference.configMap(NS, "inplace-releases", Files.readString(catalogue))).create();

    ArtifactSourcePolicy artifacts = ArtifactSourcePolicy.mirror(releases.artifactsDir());
    temporal = EmbeddedTemporal.start();
    worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, mgmt, dir.resolve("artifact-cache"), artifacts);
    TestCa.Issued serving = management.ca().server("inplace-extension");
    extension = CapiExtension.start(ExtensionOptions.loopback(serving.cert(), serving.key(), management.ca().certificate()),
        mgmt, temporal.client(), WorkflowIds.TASK_QUEUE, artifacts);
    registerExtension();

    int port = Integer.parseInt(workload.server().substring(workload.server().lastIndexOf(':') + 1));
    provider = SandboxInfraProvider.start(mgmt, "127.0.0.1", port, new SandboxHostBoot(hosts, releases,
        new KubeadmNodeBoot(mgmt, wl), kubelets, mgmt, CLUSTER, CLUSTER + "-known-hosts"));
    seedCluster();
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : new AutoCloseable[] {provider, extension, worker, temporal, kubelets, hosts, mgmt, wl, capi, workload, management}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // best effort
      }
    }
  }

  @Test
  void realCapiUpgradesEveryMachineInPlaceThroughTheHooksWithoutReplacingOne() throws Exception {
    await("5 Machines Running at " + FROM, Duration.ofMinutes(6), () -> {
      List<GenericKubernetesResource> machines = machines();
      return machines.size() == 5 && machines.stream().allMatch(m -> "Running".equals(status(m).get("phase")))
          && readyReplicas(KCP, KCP_NAME) == 3 && readyReplicas(MD, MD_NAME) == 2;
    });
    Map<String, String> before = uids();
    List<String> setsBefore = machineSetNames();
    assertEquals(1, setsBefore.size(), "one MachineSet before: " + setsBefore);

    // The user's change: a patch release on the control plane, then (once it is there) on the workers.
    long started = System.nanoTime();
    patchSpec(KCP, KCP_NAME, "{\"spec\":{\"version\":\"" + TO + "\"}}");
    await("3 control-plane Machines up to date at " + TO, Duration.ofMinutes(8),
        () -> sameMachines(before) && machines().stream().filter(KubeadmHookDoorOnRealCapiIT::controlPlane)
            .allMatch(KubeadmHookDoorOnRealCapiIT::upToDateAt));
    long controlPlaneSeconds = (System.nanoTime() - started) / 1_000_000_000L;
    started = System.nanoTime();
    patchSpec(MD, MD_NAME, "{\"spec\":{\"template\":{\"spec\":{\"version\":\"" + TO + "\"}}}}");
    await("every Machine up to date at " + TO, Duration.ofMinutes(8),
        () -> sameMachines(before) && machines().stream().allMatch(KubeadmHookDoorOnRealCapiIT::upToDateAt));
    long workersSeconds = (System.nanoTime() - started) / 1_000_000_000L;

    Map<String, Long> calls = extension.answeredCalls();
    System.out.printf("hook door on real CAPI: control plane in %d s, workers in %d s, hook calls %s%n",
        controlPlaneSeconds, workersSeconds, calls);
    assertTrue(calls.getOrDefault("CanUpdateMachine/Success", 0L) >= 3, "KCP asked CanUpdateMachine for each control plane: " + calls);
    assertTrue(calls.getOrDefault("CanUpdateMachineSet/Success", 0L) >= 1, "the MachineDeployment asked CanUpdateMachineSet: " + calls);
    assertTrue(calls.getOrDefault("UpdateMachine/Success", 0L) >= 5, "the Machine controller called UpdateMachine for each Machine: " + calls);

    // No Machine was created or deleted: the same names and UIDs.
    assertEquals(before, uids(), "Machines (name -> UID) before and after");
    // The MachineDeployment's in-place flow moves its Machines to the MachineSet of the new template;
    // the emptied old one is deleted on a later reconcile (cleanupDeployment): one MachineSet, a new
    // one, owning both workers.
    await("the old MachineSet deleted once empty", Duration.ofMinutes(2), () -> machineSetNames().size() == 1);
    List<String> setsAfter = machineSetNames();
    assertNotEquals(setsBefore.get(0), setsAfter.get(0), "the workers moved to the new template's MachineSet");
    for (GenericKubernetesResource m : machines()) {
      if (!controlPlane(m)) {
        assertEquals(setsAfter.get(0), m.getMetadata().getLabels().get("cluster.x-k8s.io/set-name"), m.getMetadata().getName());
      }
    }

    // Each Machine's update was inplace's NodeUpgrade run, which the extension started and recorded on it.
    for (GenericKubernetesResource m : machines()) {
      String run = m.getMetadata().getAnnotations().get("upgrade.inplace.dev/update-run");
      assertTrue(run != null && run.startsWith("node-upgrade-hook/" + NS + "/" + m.getMetadata().getName() + "/"), m.getMetadata().getName() + " names its run: " + run);
      assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, runStatus(run), run);
    }

    // Ground truth on each host: the target's kubelet is the file in place and it was (re)started.
    String target = releases.release(TO).binary("kubelet").sha256();
    List<BinaryStart> starts = kubelets.binaryStarts();
    for (String machine : before.keySet()) {
      assertEquals(target, sha256(hosts.host(machine).root().resolve("usr/bin/kubelet")), machine + " has the " + TO + " kubelet installed");
      assertTrue(starts.stream().anyMatch(s -> s.node().equals(machine) && s.sha256().equals(target)),
          machine + " restarted its kubelet on the " + TO + " binary: " + starts);
      assertEquals(TO, wl.nodes().withName(machine).get().getStatus().getNodeInfo().getKubeletVersion(), machine + "'s Node");
    }
    assertTrue(capi.allAlive(), "every Cluster API manager still runs");
  }

  /** Registers the extension as deploy/extension does, with a url and caBundle in place of the Service and CA injection. */
  static void registerExtension() {
    Map<String, Object> settings = new LinkedHashMap<>();
    settings.put("sshUser", hosts.user());
    settings.put("sshPort", Integer.toString(hosts.port()));
    settings.put("sshKeySecret", "{cluster}-ssh-key");
    settings.put("knownHostsSecret", "{cluster}-known-hosts");
    settings.put("catalogueConfigMap", "inplace-releases");
    settings.put("drainTimeoutSeconds", "60");
    settings.put("readyTimeoutSeconds", "60");
    settings.put("retryAfterSeconds", "2");
    GenericKubernetesResource config = new GenericKubernetesResource();
    config.setApiVersion("runtime.cluster.x-k8s.io/v1beta2");
    config.setKind("ExtensionConfig");
    config.setMetadata(new ObjectMetaBuilder().withName("inplace").build());
    config.setAdditionalProperty("spec", Map.of(
        "clientConfig", Map.of("url", "https://127.0.0.1:" + extension.port() + "/inplace",
            "caBundle", Base64.getEncoder().encodeToString(management.ca().certificatePem().getBytes(StandardCharsets.UTF_8))),
        "namespaceSelector", Map.of("matchLabels", Map.of("upgrade.inplace.dev/in-place", "true")),
        "settings", settings));
    mgmt.genericKubernetesResources(EXTENSION_CONFIGS).resource(config).create();
    await("the core manager discovers the extension's three handlers", Duration.ofMinutes(2), () -> {
      Object handlers = status(mgmt.genericKubernetesResources(EXTENSION_CONFIGS).withName("inplace").get()).get("handlers");
      return handlers instanceof List<?> list && list.size() == 3;
    });
  }

  static void seedCluster() throws Exception {
    KubeadmClusterOnRealCapiIT.seedCluster(mgmt, workload);
    // The seed applies the namespace without labels: opt it in again (the ExtensionConfig's selector).
    mgmt.namespaces().withName(NS).edit(n -> {
      n.getMetadata().getLabels().put("upgrade.inplace.dev/in-place", "true");
      return n;
    });
    // In place, not by surge: KCP asks CanUpdateMachine only where it would delete a Machine (maxSurge 0,
    // set by the seed), and the MachineDeployment creates no Machine when one may be unavailable.
    patchSpec(MD, MD_NAME, "{\"spec\":{\"rollout\":{\"strategy\":{\"type\":\"RollingUpdate\","
        + "\"rollingUpdate\":{\"maxSurge\":0,\"maxUnavailable\":1}}}}}");
  }

  static void patchSpec(ResourceDefinitionContext type, String name, String mergePatch) {
    mgmt.genericKubernetesResources(type).inNamespace(NS).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch);
  }

  /**
   * True while the Machines are those of {@code before} and every manager runs; fails at once when
   * CAPI created or deleted a Machine or a manager exited.
   */
  static boolean sameMachines(Map<String, String> before) {
    Map<String, String> now = uids();
    if (!capi.allAlive()) {
      throw new AssertionError("a Cluster API manager stopped\n" + capi.tails());
    }
    if (!now.equals(before)) {
      throw new AssertionError("CAPI replaced Machines instead of updating them in place: before " + before + ", now " + now
          + summary() + "\n" + capi.tails());
    }
    return true;
  }

  static boolean controlPlane(GenericKubernetesResource m) {
    return m.getMetadata().getLabels() != null && m.getMetadata().getLabels().containsKey("cluster.x-k8s.io/control-plane");
  }

  /** At the target version and UpToDate=True, with no in-place update pending. */
  static boolean upToDateAt(GenericKubernetesResource m) {
    Map<String, String> annotations = m.getMetadata().getAnnotations() == null ? Map.of() : m.getMetadata().getAnnotations();
    return TO.equals(spec(m).get("version")) && "True".equals(condition(m, "UpToDate"))
        && !annotations.containsKey("runtime.cluster.x-k8s.io/pending-hooks")
        && !annotations.containsKey("in-place-updates.internal.cluster.x-k8s.io/update-in-progress");
  }

  static String condition(GenericKubernetesResource r, String type) {
    Object conditions = status(r).get("conditions");
    if (conditions instanceof List<?> list) {
      for (Object c : list) {
        if (c instanceof Map<?, ?> map && type.equals(map.get("type"))) {
          return String.valueOf(map.get("status"));
        }
      }
    }
    return "";
  }

  static List<GenericKubernetesResource> machines() {
    return mgmt.genericKubernetesResources(MACHINES).inNamespace(NS).list().getItems();
  }

  static Map<String, String> uids() {
    return machines().stream().collect(Collectors.toMap(m -> m.getMetadata().getName(), m -> m.getMetadata().getUid(), (a, b) -> a, TreeMap::new));
  }

  static List<String> machineSetNames() {
    return mgmt.genericKubernetesResources(MACHINE_SETS).inNamespace(NS).list().getItems().stream()
        .map(s -> s.getMetadata().getName()).sorted().toList();
  }

  static int readyReplicas(ResourceDefinitionContext type, String name) {
    GenericKubernetesResource r = mgmt.genericKubernetesResources(type).inNamespace(NS).withName(name).get();
    return r == null ? 0 : ((Number) status(r).getOrDefault("readyReplicas", 0)).intValue();
  }

  static void await(String what, Duration atMost, java.util.concurrent.Callable<Boolean> condition) {
    try {
      Awaitility.await(what).atMost(atMost).pollInterval(Duration.ofSeconds(2)).until(condition);
    } catch (ConditionTimeoutException e) {
      throw new AssertionError(what + ": not reached\n" + summary() + "\n" + capi.tails(), e);
    }
  }

  static String summary() {
    StringBuilder out = new StringBuilder();
    for (GenericKubernetesResource m : machines()) {
      out.append('\n').append(m.getMetadata().getName()).append(" version=").append(spec(m).get("version"))
          .append(" annotations=").append(m.getMetadata().getAnnotations()).append(" status=").append(status(m));
    }
    out.append("\nMachineSets: ").append(machineSetNames());
    out.append("\nhook calls: ").append(extension == null ? "-" : extension.answeredCalls());
    return out.toString();
  }

  static Map<String, Object> status(GenericKubernetesResource r) {
    return KubeadmClusterOnRealCapiIT.status(r);
  }

  static Map<String, Object> spec(GenericKubernetesResource r) {
    return KubeadmClusterOnRealCapiIT.spec(r);
  }

  static ResourceDefinitionContext core(String kind, String plural) {
    return KubeadmClusterOnRealCapiIT.core(kind, plural);
  }

  static WorkflowExecutionStatus runStatus(String workflowId) {
    return temporal.client().getWorkflowServiceStubs().blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder().setNamespace(temporal.client().getOptions().getNamespace())
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId).build()).build())
        .getWorkflowExecutionInfo().getStatus();
  }

  static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
