package dev.inplace.sandbox.estate;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.sandbox.hosts.K3sDatastore;
import dev.inplace.sandbox.hosts.KubeletSimulator;
import dev.inplace.sandbox.hosts.SandboxHost;
import dev.inplace.sandbox.hosts.SandboxHosts;
import dev.inplace.sandbox.kube.ReplicaSetSimulator;
import dev.inplace.sandbox.kube.SandboxApiServer;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.UpgradeStep;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The simulated estate: a management API server holding a CAPI k3s or kubeadm cluster, that cluster's workload
 * API server, one SSH host per node running real shell commands against its own root directory, a
 * kubelet simulator, a ReplicaSet controller, fake release artifacts and a catalogue, and faults.
 */
public final class Estate implements EstateView, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(Estate.class);
  // fabric8's mock web server logs every request through java.util.logging at INFO; held strongly
  // so the level sticks (JUL keeps loggers weakly).
  private static final java.util.logging.Logger MOCK_SERVER_LOG = quiet("io.fabric8.mockwebserver");

  private static java.util.logging.Logger quiet(String name) {
    java.util.logging.Logger logger = java.util.logging.Logger.getLogger(name);
    logger.setLevel(java.util.logging.Level.WARNING);
    return logger;
  }

  public static final String NAMESPACE = "fleet";
  public static final String CLUSTER = "edge-1";
  public static final String SSH_KEY_SECRET = CLUSTER + "-ssh-key";
  public static final String KNOWN_HOSTS_SECRET = CLUSTER + "-known-hosts";
  public static final String KUBECONFIG_SECRET = CLUSTER + "-kubeconfig";
  public static final String CONTROL_PLANE = CLUSTER + "-control-plane";
  /**
   * The worker's identity on the management API server (its ServiceAccount in a real cluster):
   * requests made with it are what deploy/'s RBAC must grant.
   */
  public static final String WORKER_TOKEN = SandboxApiServer.WORKER_TOKEN;

  /** A node of the estate: its Machine, role, SSH address and pool (empty for control planes). */
  public record EstateNode(String name, String machine, NodeRole role, String address, String pool) {}

  private final EstateSpec spec;
  private final Path dir;
  private final FakeReleases releases;
  private final Path catalogue;
  private final SandboxApiServer management;
  private final SandboxApiServer workload;
  private final SandboxHosts hosts;
  private final List<EstateNode> nodes;
  private final KubeletSimulator kubelets;
  private final ReplicaSetSimulator replicaSets;
  private final KubernetesClient workerManagement;

  private Estate(
      EstateSpec spec,
      Path dir,
      FakeReleases releases,
      Path catalogue,
      SandboxApiServer management,
      SandboxApiServer workload,
      SandboxHosts hosts,
      List<EstateNode> nodes,
      KubeletSimulator kubelets,
      ReplicaSetSimulator replicaSets) {
    this.spec = spec;
    this.dir = dir;
    this.releases = releases;
    this.catalogue = catalogue;
    this.management = management;
    this.workload = workload;
    this.hosts = hosts;
    this.nodes = nodes;
    this.kubelets = kubelets;
    this.replicaSets = replicaSets;
    this.workerManagement = management.newClient(WORKER_TOKEN);
  }

  /** Builds and starts the whole estate under {@code dir}, its API servers on free ports. */
  public static Estate create(Path dir, EstateSpec spec) {
    return create(dir, spec, 0, 0);
  }

  /**
   * Builds and starts the whole estate under {@code dir}, the management and workload API servers on
   * {@code 127.0.0.1:managementPort} and {@code 127.0.0.1:workloadPort} (0: free ports).
   */
  public static Estate create(Path dir, EstateSpec spec, int managementPort, int workloadPort) {
    return create(dir, spec, managementPort, workloadPort, line -> { });
  }

  /**
   * As {@link #create(Path, EstateSpec, int, int)}, telling {@code progress} what it is doing: each
   * phase with the seconds since the start, and the hosts provisioned so far every few seconds
   * (the estate process prints these, so a slow start-up shows where it stands).
   */
  public static Estate create(
      Path dir, EstateSpec spec, int managementPort, int workloadPort, Consumer<String> progress) {
    StartupProgress steps = new StartupProgress(progress, System::nanoTime, spec.controlPlanes() + spec.pools() * spec.workers());
    FakeReleases releases = new FakeReleases(dir.resolve("artifacts"), spec.sizes(), spec.distribution(), spec.os());
    releases.add(spec.fromVersion());
    releases.add(spec.toVersion());
    Path catalogue = releases.writeCatalogue();
    steps.phase("releases written");

    SandboxApiServer management = SandboxApiServer.start(managementPort);
    SandboxApiServer workload = SandboxApiServer.start(workloadPort);
    CapiObjects.ALL.forEach(
        c -> management.registerCustomResource(c.getGroup(), c.getVersion(), c.getKind(), c.getPlural(), true));
    SandboxHosts hosts = SandboxHosts.open(dir, SandboxHosts.Settings.defaults().withServer(spec.hosts()));

    List<EstateNode> nodes = new ArrayList<>();
    for (int i = 0; i < spec.controlPlanes(); i++) {
      nodes.add(node(hosts, releases, spec, "cp-" + i, NodeRole.CONTROL_PLANE, ""));
      steps.hostProvisioned(nodes.size());
      if (spec.distribution() == Distribution.K3S) {
        // As k3s: a single server runs on SQLite by default, several on embedded etcd.
        (spec.controlPlanes() == 1 ? K3sDatastore.SQLITE : K3sDatastore.EMBEDDED_ETCD)
            .simulate(hosts.host("cp-" + i).root());
      }
    }
    for (int p = 0; p < spec.pools(); p++) {
      for (int i = 0; i < spec.workers(); i++) {
        nodes.add(node(hosts, releases, spec, spec.workerName(p, i), NodeRole.WORKER, spec.poolName(CLUSTER, p)));
        steps.hostProvisioned(nodes.size());
      }
    }
    steps.phase("hosts provisioned: " + nodes.size());
    seedManagement(management, workload, hosts, spec, nodes);
    steps.phase("management cluster seeded");
    seedWorkload(workload.client(), spec, nodes);
    steps.phase("workload cluster seeded");

    KubeletSimulator kubelets =
        KubeletSimulator.start(
            workload.client(),
            hosts.simulatedNodes(),
            new KubeletSimulator.Settings(spec.kubeletStartupDelay(), KubeletSimulator.Settings.POLL));
    steps.phase("kubelet simulator started");
    ReplicaSetSimulator replicaSets = ReplicaSetSimulator.start(workload.client());
    log.info("estate ready: {} control planes, {} workers on {}", spec.controlPlanes(), spec.workers(), spec.fromVersion());
    return new Estate(spec, dir, releases, catalogue, management, workload, hosts, List.copyOf(nodes), kubelets, replicaSets);
  }

  private static EstateNode node(
      SandboxHosts hosts, FakeReleases releases, EstateSpec spec, String name, NodeRole role, String pool) {
    SandboxHost host = hosts.provision(name, role, spec.fromVersion(), releases);
    return new EstateNode(name, CLUSTER + "-" + name, role, host.address(), pool);
  }

  private static void seedManagement(
      SandboxApiServer management, SandboxApiServer workload, SandboxHosts hosts, EstateSpec spec, List<EstateNode> nodes) {
    KubernetesClient client = management.client();
    // Opted in to in-place updates, as the ExtensionConfig's namespaceSelector and UpdateMachine require.
    client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE)
        .addToLabels("upgrade.inplace.dev/in-place", "true").endMetadata().build()).create();
    secret(client, KUBECONFIG_SECRET, Map.of("value", workload.kubeconfig()), "cluster.x-k8s.io/secret");
    secret(client, SSH_KEY_SECRET, Map.of(SshSettings.PRIVATE_KEY_DATA_KEY, hosts.clientPrivateKey()), "Opaque");
    secret(client, KNOWN_HOSTS_SECRET, Map.of(SshSettings.KNOWN_HOSTS_DATA_KEY, hosts.knownHosts()), "Opaque");

    Map<String, String> clusterLabel = Map.of("cluster.x-k8s.io/cluster-name", CLUSTER);
    boolean kubeadm = spec.distribution() == Distribution.KUBEADM;
    boolean k0s = spec.distribution() == Distribution.K0S;
    Map<String, Object> clusterSpec = new LinkedHashMap<>(Map.of(
        "controlPlaneRef", CapiObjects.ref(CapiObjects.CONTROL_PLANE_GROUP,
            kubeadm ? "KubeadmControlPlane" : k0s ? "K0sControlPlane" : "KThreesControlPlane", CONTROL_PLANE),
        "infrastructureRef", CapiObjects.ref("infrastructure.cluster.x-k8s.io", "Metal3Cluster", CLUSTER)));
    if (spec.clusterClass()) {
      ClusterClassObjects.seedClass(client, spec, clusterLabel);
      clusterSpec.put("topology", ClusterClassObjects.topology(spec));
    }
    create(client, CapiObjects.object(CapiObjects.CLUSTER, NAMESPACE, CLUSTER, clusterLabel, clusterSpec));
    if (kubeadm) {
      KubeadmObjects.seedControlPlane(client, spec, clusterLabel);
    } else if (k0s) {
      K0sObjects.seedControlPlane(client, spec, clusterLabel);
    } else {
    create(client, CapiObjects.object(CapiObjects.KTHREES_CONTROL_PLANE, NAMESPACE, CONTROL_PLANE, clusterLabel, Map.of(
        "replicas", spec.controlPlanes(),
        "version", spec.fromVersion(),
        "kthreesConfigSpec", Map.of("agentConfig", Map.of("airGapped", true)),
        "machineTemplate", Map.of("infrastructureRef", Map.of(
            "apiVersion", "infrastructure.cluster.x-k8s.io/v1beta1", "kind", "Metal3MachineTemplate", "name", CONTROL_PLANE)))));
    }
    String bootstrapKind = kubeadm ? "KubeadmConfig" : k0s ? "K0sWorkerConfig" : "KThreesConfig";
    for (int p = 0; p < spec.pools(); p++) {
      String pool = spec.poolName(CLUSTER, p);
      if (k0s) {
        K0sObjects.seedWorkerConfigTemplate(client, spec, pool, clusterLabel);
      }
      Map<String, Object> workerTemplate = Map.of(
          "metadata", Map.of("labels", Map.of("cluster.x-k8s.io/deployment-name", pool)),
          "spec", Map.of(
              "clusterName", CLUSTER,
              "version", spec.fromVersion(),
              "bootstrap", Map.of("configRef", CapiObjects.ref("bootstrap.cluster.x-k8s.io", bootstrapKind + "Template", pool)),
              "infrastructureRef", CapiObjects.ref("infrastructure.cluster.x-k8s.io", "Metal3MachineTemplate", pool)));
      Map<String, String> poolLabels = Map.of("cluster.x-k8s.io/cluster-name", CLUSTER, "cluster.x-k8s.io/deployment-name", pool);
      create(client, CapiObjects.object(CapiObjects.MACHINE_DEPLOYMENT, NAMESPACE, pool, clusterLabel, Map.of(
          "clusterName", CLUSTER,
          "replicas", spec.workers(),
          "selector", Map.of("matchLabels", Map.of("cluster.x-k8s.io/deployment-name", pool)),
          "template", workerTemplate)));
      GenericKubernetesResource machineSet = CapiObjects.object(CapiObjects.MACHINE_SET, NAMESPACE, machineSetOf(pool), poolLabels, Map.of(
          "clusterName", CLUSTER,
          "replicas", spec.workers(),
          "selector", Map.of("matchLabels", Map.of("cluster.x-k8s.io/deployment-name", pool)),
          "template", workerTemplate));
      machineSet.getMetadata().setAnnotations(Map.of("machinedeployment.clusters.x-k8s.io/revision", "1"));
      create(client, machineSet);
    }

    for (EstateNode node : nodes) {
      Map<String, String> labels = new LinkedHashMap<>(clusterLabel);
      if (node.role() == NodeRole.CONTROL_PLANE) {
        labels.put("cluster.x-k8s.io/control-plane", "");
        labels.put("cluster.x-k8s.io/control-plane-name", CONTROL_PLANE);
      } else {
        labels.put("cluster.x-k8s.io/deployment-name", node.pool());
        labels.put("cluster.x-k8s.io/set-name", machineSetOf(node.pool()));
      }
      GenericKubernetesResource machine = CapiObjects.object(CapiObjects.MACHINE, NAMESPACE, node.machine(), labels, Map.of(
          "clusterName", CLUSTER,
          "version", spec.fromVersion(),
          "bootstrap", Map.of("configRef", CapiObjects.ref("bootstrap.cluster.x-k8s.io",
              k0s && node.role() == NodeRole.CONTROL_PLANE ? "K0sControllerConfig" : bootstrapKind, node.machine())),
          "infrastructureRef", CapiObjects.ref("infrastructure.cluster.x-k8s.io", "Metal3Machine", node.machine())));
      machine.setAdditionalProperty("status", Map.of(
          "phase", "Running",
          "nodeRef", Map.of("name", node.name()),
          "addresses", List.of(
              Map.of("type", "InternalIP", "address", node.address()),
              Map.of("type", "Hostname", "address", node.name())),
          "nodeInfo", Map.of("kubeletVersion", spec.nodeVersion(spec.fromVersion()))));
      createWithStatus(client, CapiObjects.MACHINE, machine);
    }
    if (kubeadm) {
      KubeadmObjects.seedMachines(client, spec, nodes);
    }
  }

  /** The MachineSet the estate creates for a pool (revision 1). */
  public static String machineSetOf(String pool) {
    return pool + "-7f9c8";
  }

  private static void seedWorkload(KubernetesClient client, EstateSpec spec, List<EstateNode> nodes) {
    for (String ns : List.of("kube-system", "shop")) {
      client.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(ns).endMetadata().build()).create();
    }
    for (EstateNode node : nodes) {
      Node n = new NodeBuilder()
          .withNewMetadata().withName(node.name())
          .addToLabels("kubernetes.io/hostname", node.name())
          .addToLabels("kubernetes.io/arch", "amd64")
          .addToLabels(node.role() == NodeRole.CONTROL_PLANE ? "node-role.kubernetes.io/control-plane" : "node-role.kubernetes.io/worker", "true")
          .endMetadata()
          .withNewSpec().endSpec()
          .withNewStatus()
          .addNewCondition().withType("Ready").withStatus("True").withReason("KubeletReady").endCondition()
          .withNewNodeInfo().withKubeletVersion(spec.nodeVersion(spec.fromVersion())).withArchitecture("amd64").endNodeInfo()
          .addNewAddress().withType("InternalIP").withAddress(node.address()).endAddress()
          .endStatus()
          .build();
      client.nodes().resource(n).create();
      if (client.nodes().withName(node.name()).get().getStatus() == null) {
        client.nodes().withName(node.name()).editStatus(x -> { x.setStatus(n.getStatus()); return x; });
      }
      // A DaemonSet pod on every node: drains leave it in place.
      createPod(client, "kube-system", "node-exporter-" + node.name(), node.name(), Map.of("app", "node-exporter"), "DaemonSet", "node-exporter");
    }
    // A Deployment protected by a PodDisruptionBudget: drains must evict one replica at a time.
    List<EstateNode> workers = nodes.stream().filter(n -> n.role() == NodeRole.WORKER).toList();
    List<EstateNode> hostsForWeb = workers.isEmpty() ? nodes : workers;
    for (int i = 0; i < 2; i++) {
      EstateNode on = hostsForWeb.get(i % hostsForWeb.size());
      createPod(client, "shop", "web-5d8f7b9c4-" + (char) ('a' + i) + "x" + i, on.name(), Map.of("app", "web"), "ReplicaSet", "web-5d8f7b9c4");
    }
    client.policy().v1().podDisruptionBudget().inNamespace("shop").resource(new PodDisruptionBudgetBuilder()
        .withNewMetadata().withName("web").withNamespace("shop").endMetadata()
        .withNewSpec().withMinAvailable(new IntOrString(1))
        .withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec()
        .build()).create();
  }

  private static void createPod(
      KubernetesClient client, String ns, String name, String node, Map<String, String> labels, String ownerKind, String ownerName) {
    Pod pod = new PodBuilder()
        .withNewMetadata().withName(name).withNamespace(ns).withLabels(labels)
        .addNewOwnerReference().withApiVersion("apps/v1").withKind(ownerKind).withName(ownerName)
        .withUid(ownerKind.toLowerCase() + "-" + ownerName).withController(true).endOwnerReference()
        .endMetadata()
        .withNewSpec().withNodeName(node).addNewContainer().withName("main").withImage("registry.local/" + labels.values().iterator().next() + ":1").endContainer().endSpec()
        .withNewStatus().withPhase("Running")
        .addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus()
        .build();
    client.pods().inNamespace(ns).resource(pod).create();
    if (client.pods().inNamespace(ns).withName(name).get().getStatus() == null
        || client.pods().inNamespace(ns).withName(name).get().getStatus().getPhase() == null) {
      client.pods().inNamespace(ns).withName(name).editStatus(p -> { p.setStatus(pod.getStatus()); return p; });
    }
  }

  private static void secret(KubernetesClient client, String name, Map<String, String> data, String type) {
    Map<String, String> encoded = new LinkedHashMap<>();
    data.forEach((k, v) -> encoded.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    client.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder()
        .withNewMetadata().withName(name).withNamespace(NAMESPACE)
        .addToLabels("cluster.x-k8s.io/cluster-name", CLUSTER).endMetadata()
        .withType(type).withData(encoded).build()).create();
  }

  static void create(KubernetesClient client, GenericKubernetesResource resource) {
    client.genericKubernetesResources(contextOf(resource)).inNamespace(NAMESPACE).resource(resource).create();
  }

  static void createWithStatus(
      KubernetesClient client, io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext type, GenericKubernetesResource resource) {
    Object status = resource.getAdditionalProperties().get("status");
    client.genericKubernetesResources(type).inNamespace(NAMESPACE).resource(resource).create();
    var stored = client.genericKubernetesResources(type).inNamespace(NAMESPACE).withName(resource.getMetadata().getName());
    if (stored.get().getAdditionalProperties().get("status") == null) {
      stored.editStatus(r -> { r.setAdditionalProperty("status", status); return r; });
    }
  }

  private static io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext contextOf(HasMetadata resource) {
    return CapiObjects.ALL.stream()
        .filter(c -> resource.getKind().equals(c.getKind()))
        .findFirst()
        .orElseThrow();
  }

  /**
   * Arms a fault: {@code drain} puts a pod on the node whose PodDisruptionBudget never allows an
   * eviction; every other step is armed on the host (see FaultInjector).
   */
  public void arm(String node, UpgradeStep step) {
    requireNode(node);
    if (step == UpgradeStep.DRAIN) {
      KubernetesClient client = workload.client();
      String name = "ledger-" + node;
      createPod(client, "shop", name + "-0", node, Map.of("app", name), "ReplicaSet", name);
      client.policy().v1().podDisruptionBudget().inNamespace("shop").resource(new PodDisruptionBudgetBuilder()
          .withNewMetadata().withName(name).withNamespace("shop").endMetadata()
          .withNewSpec().withMaxUnavailable(new IntOrString(0))
          .withNewSelector().addToMatchLabels("app", name).endSelector().endSpec()
          .build()).create();
    }
    hosts.faults().arm(node, step, spec.toVersion());
  }

  /** Arms a Kairos reboot fault ({@code boot} or {@code return}) on a node for the target's image. */
  public void armKairos(String node, String fault) {
    requireNode(node);
    hosts.faults().armKairos(node, fault, spec.toVersion());
  }

  /** Clears every fault armed on a node (the blocking budget of a drain fault included). */
  @Override
  public void clearFaults(String node) {
    requireNode(node);
    hosts.faults().clear(node);
    workload.client().policy().v1().podDisruptionBudget().inNamespace("shop").withName("ledger-" + node).delete();
  }

  private void requireNode(String node) {
    if (nodes.stream().noneMatch(n -> n.name().equals(node))) {
      throw new IllegalArgumentException(
          "no node '" + node + "' in the sandbox; nodes are " + nodes.stream().map(EstateNode::name).toList());
    }
  }

  public EstateSpec spec() { return spec; }
  public Path dir() { return dir; }
  @Override
  public Path catalogue() { return catalogue; }
  public FakeReleases releases() { return releases; }

  /** The worker's artifact sources: the fake releases as a local mirror (INPLACE_ARTIFACT_MIRROR_DIR). */
  public ArtifactSourcePolicy artifactPolicy() {
    // The allowlist is on, as in production: the sandbox's registry is the one host it names.
    return new ArtifactSourcePolicy(java.util.Set.of(FakeReleases.REGISTRY_HOST), releases.artifactsDir(),
        ArtifactSourcePolicy.DEFAULT_MAX_BYTES);
  }

  /** The estate's administrator on the management cluster: seeds objects, applies resources, plays CAPI. */
  @Override
  public KubernetesClient management() { return management.client(); }

  /** The client the worker (activities, watcher, extension) uses: its requests are recorded. */
  public KubernetesClient workerManagement() { return workerManagement; }

  /** What the worker asked the management API server for (distinct requests, no object names). */
  public java.util.Set<dev.inplace.sandbox.kube.ApiRequest> workerRequests() {
    return management.requestsBy(WORKER_TOKEN);
  }
  public KubernetesClient workload() { return workload.client(); }
  /** A kubeconfig for the management API server (the worker's KUBECONFIG). */
  public String managementKubeconfig() { return management.kubeconfig(); }
  /** A kubeconfig for the workload cluster's API server (as in the {@code <cluster>-kubeconfig} Secret). */
  public String workloadKubeconfig() { return workload.kubeconfig(); }
  public SandboxHosts hosts() { return hosts; }
  @Override
  public List<EstateNode> nodes() { return nodes; }

  /** The MachineDeployments of the cluster, in order. */
  @Override
  public List<String> pools() {
    List<String> pools = new ArrayList<>();
    for (int p = 0; p < spec.pools(); p++) {
      pools.add(spec.poolName(CLUSTER, p));
    }
    return pools;
  }
  @Override
  public ClusterRef cluster() { return new ClusterRef(NAMESPACE, CLUSTER); }

  /** SSH settings a run uses for this estate: references to the Secrets, never their contents. */
  @Override
  public SshSettings ssh() {
    return new SshSettings(hosts.user(), hosts.port(), SSH_KEY_SECRET, KNOWN_HOSTS_SECRET, null);
  }

  /**
   * Ground truth of every node and the cluster, read now from the API servers, the hosts' journals
   * and the kubelet simulator's memory (see {@link dev.inplace.sandbox.truth.EstateReport}).
   */
  public dev.inplace.sandbox.truth.EstateReport report() {
    return GroundTruth.read(
        management.client(), workload.client(), nodes, this::hostRoot, kubelets.binaryStarts(), hosts.sshFaults());
  }

  /** SSH sessions the hosts accepted (MINA only; empty with OpenSSH hosts). */
  public java.util.OptionalLong sshSessions() {
    return hosts.sshSessions();
  }

  /** The seeded SSH faults of the hosts (MINA only): settings and counters. */
  public dev.inplace.sandbox.hosts.SshFaults sshFaults() {
    return hosts.sshFaults();
  }

  /** Every start of a Kubernetes binary on any node, with the file's sha256. */
  public List<dev.inplace.sandbox.hosts.BinaryStart> binaryStarts() {
    return kubelets.binaryStarts();
  }

  /** The root directory that stands for a node's host filesystem. */
  public Path hostRoot(String node) {
    return hosts.host(node).root();
  }

  @Override
  public void close() {
    closeQuietly(replicaSets);
    closeQuietly(kubelets);
    closeQuietly(hosts);
    closeQuietly(workload);
    closeQuietly(workerManagement);
    closeQuietly(management);
  }

  private static void closeQuietly(AutoCloseable c) {
    try {
      if (c != null) {
        c.close();
      }
    } catch (Exception e) {
      log.debug("closing {} failed", c, e);
    }
  }
}
