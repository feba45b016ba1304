package dev.inplace.testbed;

import com.fasterxml.jackson.core.type.TypeReference;
import com.fasterxml.jackson.databind.MappingIterator;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLMapper;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster API's real managers on a test-bed management cluster: the core manager, the
 * KubeadmControlPlane provider and the kubeadm bootstrap provider, with the ClusterTopology,
 * RuntimeSDK and InPlaceUpdates feature gates. Their CRDs and webhook configurations are Cluster
 * API's own (rendered from its {@code config/} with kustomize), rewritten as envtest does: each
 * {@code service:} client config becomes a {@code url:} on loopback with the test CA as caBundle.
 * The managers run as the administrator (their own RBAC is not what the proofs are about).
 */
public final class CapiManagers implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(CapiManagers.class);
  /** The feature gates of the core manager; KCP gets the same minus RuntimeSDK (it only reads ExtensionConfigs). */
  public static final String CORE_GATES = "ClusterTopology=true,RuntimeSDK=true,InPlaceUpdates=true";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final YAMLMapper YAML = new YAMLMapper();

  /** One manager: its binary, its webhook port, the group its CRDs belong to, its health port. */
  private record Manager(String name, String binary, String gates, String manifests, int webhookPort, int healthPort, int metricsPort) {}

  private final List<LocalProcess> processes;
  private final String version;

  private CapiManagers(List<LocalProcess> processes, String version) {
    this.processes = processes;
    this.version = version;
  }

  /**
   * The common names of the runtime-extension client certificates {@link #start(KubeControlPlane,
   * Path, TestbedBinaries, boolean)} issues: the core manager (discovery, CanUpdateMachineSet,
   * UpdateMachine) and the KubeadmControlPlane manager (CanUpdateMachine), as deploy/extension names
   * them.
   */
  public static final Map<String, String> RUNTIME_EXTENSION_CLIENTS = Map.of(
      "capi-manager", "capi-controller-manager",
      "kubeadm-control-plane-manager", "capi-kubeadm-control-plane-controller-manager");

  /** Installs Cluster API's CRDs and webhooks on {@code plane} and starts its three managers. */
  public static CapiManagers start(KubeControlPlane plane, Path dir, TestbedBinaries binaries) {
    return start(plane, dir, binaries, false);
  }

  /**
   * As {@link #start(KubeControlPlane, Path, TestbedBinaries)}; with {@code runtimeExtensionClientCerts}
   * the core and KubeadmControlPlane managers present a client certificate to runtime extensions
   * ({@code --runtime-extension-client-cert-file}/{@code -key-file}), issued by the plane's CA with
   * the common name {@link #RUNTIME_EXTENSION_CLIENTS} gives: an extension serving mutual TLS trusts
   * {@code plane.ca()}.
   */
  public static CapiManagers start(KubeControlPlane plane, Path dir, TestbedBinaries binaries, boolean runtimeExtensionClientCerts) {
    long started = System.nanoTime();
    List<Path> paths = binaries.ensure("capi-manager", "kubeadm-control-plane-manager", "kubeadm-bootstrap-manager", "capi-manifests");
    Path manifests = paths.get(3);
    Kubectl kubectl = new Kubectl(binaries, plane.adminKubeconfig());
    List<Manager> managers = List.of(
        new Manager("capi-manager", paths.get(0).toString(), CORE_GATES, "core",
            KubeControlPlane.freePort(), KubeControlPlane.freePort(), KubeControlPlane.freePort()),
        new Manager("kubeadm-control-plane-manager", paths.get(1).toString(), "ClusterTopology=true,InPlaceUpdates=true",
            "kubeadm-control-plane", KubeControlPlane.freePort(), KubeControlPlane.freePort(), KubeControlPlane.freePort()),
        new Manager("kubeadm-bootstrap-manager", paths.get(2).toString(), "ClusterTopology=true", "kubeadm-bootstrap",
            KubeControlPlane.freePort(), KubeControlPlane.freePort(), KubeControlPlane.freePort()));
    String caBundle = Base64.getEncoder().encodeToString(plane.ca().certificatePem().getBytes(StandardCharsets.UTF_8));

    // CRDs first (conversion is only called for a non-storage version), then the managers, then the
    // webhook configurations once each manager's webhook server answers: they fail closed.
    for (Manager m : managers) {
      List<Map<String, Object>> crds = documents(kubectl.kustomize(manifests.resolve(m.manifests()).resolve("crd")));
      crds.forEach(crd -> pointConversionAt(crd, m.webhookPort(), caBundle));
      kubectl.apply(list(crds));
    }
    Path certs = dir.resolve("capi-webhook-certs");
    TestCa.Issued serving = plane.ca().server("capi-webhooks");
    try {
      Files.createDirectories(certs);
      Files.copy(serving.cert(), certs.resolve("tls.crt"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
      Files.copy(serving.key(), certs.resolve("tls.key"), java.nio.file.StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    List<LocalProcess> processes = new ArrayList<>();
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    for (Manager m : managers) {
      List<String> command = new ArrayList<>(List.of(m.binary(), "--kubeconfig", plane.adminKubeconfig().toString(),
          "--feature-gates", m.gates(), "--webhook-port", String.valueOf(m.webhookPort()),
          "--webhook-cert-dir", certs.toString(), "--health-addr", "127.0.0.1:" + m.healthPort(),
          "--diagnostics-address", "127.0.0.1:" + m.metricsPort(), "--insecure-diagnostics", "--v", "2"));
      String clientName = RUNTIME_EXTENSION_CLIENTS.get(m.name());
      if (runtimeExtensionClientCerts && clientName != null) {
        TestCa.Issued client = plane.ca().client("runtime-extension-client-" + m.name(), clientName);
        command.addAll(List.of("--runtime-extension-client-cert-file", client.cert().toString(),
            "--runtime-extension-client-key-file", client.key().toString()));
      }
      if (m.name().equals("capi-manager")) {
        // Short grace periods: the test bed's workload servers are restarted by some proofs.
        command.addAll(List.of("--remote-connection-grace-period", "50s", "--remote-conditions-grace-period", "2m"));
      }
      processes.add(LocalProcess.start(m.name(), command, dir));
    }
    for (int i = 0; i < managers.size(); i++) {
      Manager m = managers.get(i);
      processes.get(i).awaitReady(() -> ok(http, "http://127.0.0.1:" + m.healthPort() + "/readyz"), START_TIMEOUT);
    }
    for (Manager m : managers) {
      Path webhooks = manifests.resolve(m.manifests()).resolve("webhook/manifests.yaml");
      List<Map<String, Object>> configs = documents(read(webhooks));
      configs.forEach(c -> pointWebhooksAt(c, m.name(), m.webhookPort(), caBundle));
      kubectl.apply(list(configs));
    }
    String version = readVersion(binaries);
    log.info("Cluster API {} managers ready in {} ms", version, (System.nanoTime() - started) / 1_000_000);
    return new CapiManagers(processes, version);
  }

  /** The Cluster API release the managers were built from (testbed/versions.env). */
  public String version() {
    return version;
  }

  /**
   * The version the running core manager reports of itself: the {@code Version: ...} line it logs
   * at start-up (from the version ldflags build.sh sets). Empty when it has not logged one.
   */
  public java.util.Optional<String> runningVersion() {
    java.util.regex.Pattern line = java.util.regex.Pattern.compile("Version: (v[0-9][0-9A-Za-z.+-]*)");
    for (LocalProcess p : processes) {
      if (!p.logFile().getFileName().toString().startsWith("capi-manager")) {
        continue;
      }
      try (java.util.stream.Stream<String> lines = Files.lines(p.logFile())) {
        return lines.map(line::matcher).filter(java.util.regex.Matcher::find).map(m -> m.group(1)).findFirst();
      } catch (IOException e) {
        throw new UncheckedIOException("cannot read " + p.logFile(), e);
      }
    }
    return java.util.Optional.empty();
  }

  /** True while every manager process runs. */
  public boolean allAlive() {
    return processes.stream().allMatch(LocalProcess::isAlive);
  }

  /** The last log lines of each manager, for a failed proof's message. */
  public String tails() {
    StringBuilder out = new StringBuilder();
    for (LocalProcess p : processes) {
      out.append("--- ").append(p.logFile().getFileName()).append('\n').append(p.tail()).append('\n');
    }
    return out.toString();
  }

  @Override
  public void close() {
    processes.forEach(LocalProcess::close);
  }

  @SuppressWarnings("unchecked")
  static void pointConversionAt(Map<String, Object> crd, int port, String caBundle) {
    Map<String, Object> spec = (Map<String, Object>) crd.get("spec");
    Map<String, Object> conversion = (Map<String, Object>) spec.get("conversion");
    if (conversion == null || !"Webhook".equals(conversion.get("strategy"))) {
      return;
    }
    Map<String, Object> webhook = (Map<String, Object>) conversion.computeIfAbsent("webhook", k -> new LinkedHashMap<>());
    webhook.put("clientConfig", new LinkedHashMap<>(Map.of("url", "https://127.0.0.1:" + port + "/convert", "caBundle", caBundle)));
    webhook.put("conversionReviewVersions", List.of("v1"));
  }

  /** Renames the configuration after its manager (all three ship the same names) and points each webhook at it. */
  @SuppressWarnings("unchecked")
  static void pointWebhooksAt(Map<String, Object> config, String manager, int port, String caBundle) {
    Map<String, Object> metadata = (Map<String, Object>) config.get("metadata");
    metadata.put("name", manager + "-" + metadata.get("name"));
    for (Map<String, Object> webhook : (List<Map<String, Object>>) config.get("webhooks")) {
      Map<String, Object> clientConfig = (Map<String, Object>) webhook.get("clientConfig");
      Map<String, Object> service = (Map<String, Object>) clientConfig.get("service");
      String path = service == null ? "" : String.valueOf(service.get("path"));
      webhook.put("clientConfig", new LinkedHashMap<>(Map.of("url", "https://127.0.0.1:" + port + path, "caBundle", caBundle)));
    }
  }

  static List<Map<String, Object>> documents(String yaml) {
    List<Map<String, Object>> docs = new ArrayList<>();
    try (MappingIterator<Map<String, Object>> it = YAML.readerFor(new TypeReference<Map<String, Object>>() {}).readValues(yaml)) {
      while (it.hasNext()) {
        Map<String, Object> doc = it.next();
        if (doc != null && !doc.isEmpty()) {
          docs.add(doc);
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot parse rendered manifests", e);
    }
    return docs;
  }

  static String list(List<Map<String, Object>> items) {
    try {
      return JSON.writeValueAsString(Map.of("apiVersion", "v1", "kind", "List", "items", items));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String readVersion(TestbedBinaries binaries) {
    return binaries.pinnedVersion("CLUSTER_API_VERSION");
  }

  private static boolean ok(HttpClient http, String url) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }
}
