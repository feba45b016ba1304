package dev.inplace.sandbox.infra;

import dev.inplace.sandbox.hosts.KubeletSimulator;
import dev.inplace.sandbox.hosts.SandboxHosts;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.testbed.CapiManagers;
import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestbedBinaries;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;

/**
 * A kubeadm cluster on the test bed's real components, as an operator would have it before asking
 * inplace for anything: real etcd and kube-apiservers for the management and the workload cluster,
 * Cluster API's three real managers (InPlaceUpdates, RuntimeSDK, ClusterTopology), the sandbox's
 * infrastructure provider booting each Machine onto a sandbox SSH host of its own, the kubelet
 * simulator reporting each Node's kubelet version from the binary installed on its host, and next to
 * the cluster what inplace needs: the opt-in namespace label, the SSH key Secret, the known_hosts
 * Secret (rewritten at each boot) and the release catalogue ConfigMap.
 *
 * <p>Used by the integration tests on real Cluster API and by {@code demo --kube real}; {@link
 * CapiEstate} reads and patches what the controllers do with it.
 */
public final class RealCapiBed implements AutoCloseable {
  public static final String NAMESPACE = KubeadmClusterSeed.NAMESPACE;
  public static final String CLUSTER = KubeadmClusterSeed.CLUSTER;
  public static final String CATALOGUE = "inplace-releases";
  public static final String SSH_KEY_SECRET = CLUSTER + "-ssh-key";
  public static final String KNOWN_HOSTS_SECRET = CLUSTER + "-known-hosts";
  /** The label deploy/extension's ExtensionConfig selects namespaces by. */
  public static final String OPT_IN_LABEL = "upgrade.inplace.dev/in-place";

  private final KubeControlPlane management;
  private final KubeControlPlane workload;
  private final CapiManagers capi;
  private final KubernetesClient mgmt;
  private final KubernetesClient wl;
  private final FakeReleases releases;
  private final Path catalogue;
  private final SandboxHosts hosts;
  private final KubeletSimulator kubelets;
  private final List<AutoCloseable> started;
  private SandboxInfraProvider provider;

  private RealCapiBed(
      KubeControlPlane management, KubeControlPlane workload, CapiManagers capi, KubernetesClient mgmt, KubernetesClient wl,
      FakeReleases releases, Path catalogue, SandboxHosts hosts, KubeletSimulator kubelets, List<AutoCloseable> started) {
    this.management = management;
    this.workload = workload;
    this.capi = capi;
    this.mgmt = mgmt;
    this.wl = wl;
    this.releases = releases;
    this.catalogue = catalogue;
    this.hosts = hosts;
    this.kubelets = kubelets;
    this.started = started;
  }

  /**
   * Starts the real servers and managers, the hosts and the kubelet simulator under {@code dir}, with
   * kubeadm releases of every version in {@code versions} in the catalogue. The cluster itself is
   * created by {@link #seed}. With {@code runtimeExtensionClients}, the managers get client
   * certificates for calling a runtime extension over mutual TLS.
   */
  public static RealCapiBed start(Path dir, List<String> versions, boolean runtimeExtensionClients) throws Exception {
    List<AutoCloseable> started = new ArrayList<>();
    try {
      TestbedBinaries binaries = TestbedBinaries.locate();
      KubeControlPlane management = remember(started, KubeControlPlane.start("management", dir.resolve("management"), binaries));
      KubeControlPlane workload = remember(started, KubeControlPlane.start("workload", dir.resolve("workload"), binaries));
      CapiManagers capi = remember(started, CapiManagers.start(management, dir.resolve("capi"), binaries, runtimeExtensionClients));
      KubernetesClient mgmt = remember(started, client(management.adminKubeconfig()));
      KubernetesClient wl = remember(started, client(workload.adminKubeconfig()));
      Path estate = dir.resolve("estate");
      FakeReleases releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small(), Distribution.KUBEADM, HostOs.STANDARD);
      versions.forEach(releases::add);
      Path catalogue = releases.writeCatalogue();
      SandboxHosts hosts = remember(started, SandboxHosts.open(estate, SandboxHosts.Settings.defaults()));
      KubeletSimulator kubelets = remember(started, KubeletSimulator.start(wl, List.of(),
          new KubeletSimulator.Settings(Duration.ofSeconds(1), KubeletSimulator.Settings.POLL)));
      return new RealCapiBed(management, workload, capi, mgmt, wl, releases, catalogue, hosts, kubelets, started);
    } catch (Exception | Error e) {
      closeAll(started);
      throw e;
    }
  }

  /**
   * Creates the kubeadm cluster ({@link KubeadmClusterSeed}: {@code controlPlanes} control-plane
   * Machines and a MachineDeployment of {@code workers}, all at {@code version}), what an operator
   * puts next to it for inplace, and starts the infrastructure provider that boots its Machines.
   */
  public void seed(String version, int controlPlanes, int workers) throws Exception {
    prepareForSeed();
    KubeadmClusterSeed.seed(mgmt, workload, version, controlPlanes, workers);
  }

  /**
   * As {@link #seed}, the cluster topology-managed instead ({@link ClusterClassSeed}): a ClusterClass
   * offering {@code upgrade} and a Cluster with {@code spec.topology} at {@code version}.
   */
  public void seedWithClusterClass(String version, int controlPlanes, int workers, ClusterClassSeed.Upgrade upgrade) throws Exception {
    prepareForSeed();
    ClusterClassSeed.seed(mgmt, workload, version, controlPlanes, workers, upgrade);
  }

  private void prepareForSeed() throws Exception {
    mgmt.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE)
        .addToLabels(OPT_IN_LABEL, "true").endMetadata().build()).serverSideApply();
    mgmt.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder().withMetadata(new ObjectMetaBuilder().withName(SSH_KEY_SECRET)
        .withNamespace(NAMESPACE).build()).withType("Opaque").withData(Map.of(SshSettings.PRIVATE_KEY_DATA_KEY,
            Base64.getEncoder().encodeToString(hosts.clientPrivateKey().getBytes(StandardCharsets.UTF_8)))).build()).create();
    mgmt.resource(CatalogueReference.configMap(NAMESPACE, CATALOGUE, Files.readString(catalogue))).create();
    int port = Integer.parseInt(workload.server().substring(workload.server().lastIndexOf(':') + 1));
    provider = SandboxInfraProvider.start(mgmt, "127.0.0.1", port, new SandboxHostBoot(hosts, releases,
        new KubeadmNodeBoot(mgmt, wl), kubelets, mgmt, CLUSTER, KNOWN_HOSTS_SECRET));
  }

  /**
   * Registers a runtime extension serving on loopback {@code port} as deploy/extension does, with a
   * {@code url} and the management plane's CA as {@code caBundle} in place of the Service and CA
   * injection, deploy/extension's namespace selector and the settings the sandbox's hosts need; waits
   * until the core manager has discovered its four handlers.
   */
  public void registerExtension(int port) {
    SshSettings ssh = ssh();
    Map<String, Object> settings = new java.util.LinkedHashMap<>();
    settings.put("sshUser", ssh.user());
    settings.put("sshPort", Integer.toString(ssh.port()));
    settings.put("sshKeySecret", "{cluster}-ssh-key");
    settings.put("knownHostsSecret", "{cluster}-known-hosts");
    settings.put("catalogueConfigMap", CATALOGUE);
    settings.put("drainTimeoutSeconds", "60");
    settings.put("readyTimeoutSeconds", "60");
    settings.put("retryAfterSeconds", "2");
    io.fabric8.kubernetes.api.model.GenericKubernetesResource config = new io.fabric8.kubernetes.api.model.GenericKubernetesResource();
    config.setApiVersion("runtime.cluster.x-k8s.io/v1beta2");
    config.setKind("ExtensionConfig");
    config.setMetadata(new ObjectMetaBuilder().withName("inplace").build());
    config.setAdditionalProperty("spec", Map.of(
        "clientConfig", Map.of("url", "https://127.0.0.1:" + port + "/inplace",
            "caBundle", Base64.getEncoder().encodeToString(management.ca().certificatePem().getBytes(StandardCharsets.UTF_8))),
        "namespaceSelector", Map.of("matchLabels", Map.of(OPT_IN_LABEL, "true")),
        "settings", settings));
    mgmt.genericKubernetesResources(CapiEstate.EXTENSION_CONFIGS).resource(config).create();
    estate().await("the core manager discovers the extension's four handlers", Duration.ofMinutes(2), () -> {
      Object handlers = CapiEstate.status(mgmt.genericKubernetesResources(CapiEstate.EXTENSION_CONFIGS).withName("inplace").get())
          .get("handlers");
      return handlers instanceof List<?> list && list.size() == 4;
    });
  }

  /** The SSH settings the hosts answer with (user, port, the Secrets {@link #seed} creates). */
  public SshSettings ssh() {
    return new SshSettings(hosts.user(), hosts.port(), SSH_KEY_SECRET, KNOWN_HOSTS_SECRET, null);
  }

  public KubeControlPlane management() {
    return management;
  }

  public KubeControlPlane workload() {
    return workload;
  }

  public CapiManagers capi() {
    return capi;
  }

  /** The management cluster, as its administrator. */
  public KubernetesClient managementClient() {
    return mgmt;
  }

  /** The workload cluster, as its administrator. */
  public KubernetesClient workloadClient() {
    return wl;
  }

  public FakeReleases releases() {
    return releases;
  }

  public SandboxHosts hosts() {
    return hosts;
  }

  public KubeletSimulator kubelets() {
    return kubelets;
  }

  /** Reads and patches the cluster's CAPI objects on the management cluster. */
  public CapiEstate estate() {
    return new CapiEstate(mgmt, NAMESPACE, CLUSTER, capi);
  }

  @Override
  public void close() {
    if (provider != null) {
      provider.close();
    }
    closeAll(started);
  }

  /** A client of the server a kubeconfig names, failing fast instead of retrying. */
  public static KubernetesClient client(Path kubeconfig) {
    try {
      Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
      config.setRequestRetryBackoffLimit(0);
      return new KubernetesClientBuilder().withConfig(config).build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + kubeconfig, e);
    }
  }

  private static <T extends AutoCloseable> T remember(List<AutoCloseable> started, T c) {
    started.add(c);
    return c;
  }

  private static void closeAll(List<AutoCloseable> started) {
    for (int i = started.size() - 1; i >= 0; i--) {
      try {
        started.get(i).close();
      } catch (Exception e) {
        // best effort: the rest still stop
      }
    }
    started.clear();
  }
}
