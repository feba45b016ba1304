package dev.inplace.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * cluster-api-k3s's real managers on a test-bed management cluster that already runs Cluster API
 * ({@link CapiManagers}): the KThreesControlPlane provider and the KThreesConfig bootstrap provider.
 * Their CRDs and webhook configurations are cluster-api-k3s's own (rendered from its {@code config/}
 * with kustomize), rewritten as {@link CapiManagers} does: each {@code service:} client config becomes
 * a {@code url:} on loopback with the test CA as caBundle, each configuration is prefixed with its
 * manager's name.
 *
 * <p>Upstream's main packages hard-code the webhook port and have no health endpoint; testbed/build.sh
 * builds them with the port, host and certificate directory read from {@code INPLACE_TESTBED_WEBHOOK_*}
 * (docs/testbed.md), and a manager counts as ready once its webhook server answers over TLS with the
 * test CA's certificate. The managers run as the administrator.
 */
public final class K3sManagers implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(K3sManagers.class);
  private static final Duration START_TIMEOUT = Duration.ofSeconds(120);

  /** The manager names, as the components testbed/build.sh builds. */
  public static final String CONTROL_PLANE = "k3s-control-plane-manager";
  public static final String BOOTSTRAP = "k3s-bootstrap-manager";

  /** One manager: its name, its binary, the directory of its manifests, its webhook port. */
  private record Manager(String name, Path binary, String manifests, int webhookPort) {}

  private final Map<String, LocalProcess> processes;
  private final Map<String, Manager> managers;
  private final HttpClient probe;
  private final String version;

  private K3sManagers(Map<String, LocalProcess> processes, Map<String, Manager> managers, HttpClient probe, String version) {
    this.processes = processes;
    this.managers = managers;
    this.probe = probe;
    this.version = version;
  }

  /**
   * Installs cluster-api-k3s's CRDs and webhooks on {@code plane} and starts its two managers. Cluster
   * API's CRDs must be installed and its core manager running first: the k3s managers watch Clusters
   * and Machines at v1beta1, which the core converts.
   */
  public static K3sManagers start(KubeControlPlane plane, Path dir, TestbedBinaries binaries) {
    long started = System.nanoTime();
    List<Path> paths = binaries.ensure(CONTROL_PLANE, BOOTSTRAP, "k3s-manifests");
    Path manifests = paths.get(2);
    Kubectl kubectl = new Kubectl(binaries, plane.adminKubeconfig());
    List<Manager> list = List.of(
        new Manager(CONTROL_PLANE, paths.get(0), "k3s-control-plane", KubeControlPlane.freePort()),
        new Manager(BOOTSTRAP, paths.get(1), "k3s-bootstrap", KubeControlPlane.freePort()));
    String caBundle = Base64.getEncoder().encodeToString(plane.ca().certificatePem().getBytes(StandardCharsets.UTF_8));

    // As for Cluster API: CRDs first, then the managers, then the webhook configurations (they fail closed).
    for (Manager m : list) {
      List<Map<String, Object>> crds = CapiManagers.documents(kubectl.kustomize(manifests.resolve(m.manifests()).resolve("crd")));
      crds.forEach(crd -> CapiManagers.pointConversionAt(crd, m.webhookPort(), caBundle));
      kubectl.apply(CapiManagers.list(crds));
    }
    Path certs = servingCertificate(plane, dir.resolve("k3s-webhook-certs"));
    HttpClient probe = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
        .sslContext(PemTls.context(plane.ca().certificate(), null, null)).build();
    Map<String, LocalProcess> processes = new LinkedHashMap<>();
    Map<String, Manager> byName = new LinkedHashMap<>();
    for (Manager m : list) {
      byName.put(m.name(), m);
      processes.put(m.name(), LocalProcess.start(m.name(),
          List.of(m.binary().toString(), "--kubeconfig", plane.adminKubeconfig().toString(), "--metrics-addr", "0"),
          Map.of("INPLACE_TESTBED_WEBHOOK_PORT", String.valueOf(m.webhookPort()),
              "INPLACE_TESTBED_WEBHOOK_HOST", "127.0.0.1",
              "INPLACE_TESTBED_WEBHOOK_CERT_DIR", certs.toString()), dir));
    }
    K3sManagers k3s = new K3sManagers(processes, byName, probe, binaries.pinnedVersion("CLUSTER_API_K3S_VERSION"));
    try {
      list.forEach(m -> k3s.awaitReady(m.name()));
      for (Manager m : list) {
        List<Map<String, Object>> configs = CapiManagers.documents(read(manifests.resolve(m.manifests()).resolve("webhook/manifests.yaml")));
        configs.forEach(c -> CapiManagers.pointWebhooksAt(c, m.name(), m.webhookPort(), caBundle));
        kubectl.apply(CapiManagers.list(configs));
      }
    } catch (RuntimeException e) {
      k3s.close();
      throw e;
    }
    log.info("cluster-api-k3s {} managers ready in {} ms", k3s.version, (System.nanoTime() - started) / 1_000_000);
    return k3s;
  }

  /** The cluster-api-k3s release the managers were built from (testbed/versions.env). */
  public String version() {
    return version;
  }

  /** True while both manager processes run. */
  public boolean allAlive() {
    return processes.values().stream().allMatch(LocalProcess::isAlive);
  }

  /** Kills one manager (SIGKILL): its webhooks stop answering, its configurations stay. */
  public void kill(String manager) {
    process(manager).kill();
  }

  /** Starts a killed manager again and waits until its webhook server answers. */
  public void restart(String manager) {
    process(manager).restart();
    awaitReady(manager);
  }

  /** The last log lines of each manager, for a failed proof's message. */
  public String tails() {
    StringBuilder out = new StringBuilder();
    for (LocalProcess p : processes.values()) {
      out.append("--- ").append(p.logFile().getFileName()).append('\n').append(p.tail()).append('\n');
    }
    return out.toString();
  }

  @Override
  public void close() {
    processes.values().forEach(LocalProcess::close);
  }

  private LocalProcess process(String manager) {
    LocalProcess p = processes.get(manager);
    if (p == null) {
      throw new IllegalArgumentException("no k3s manager named " + manager + " (known: " + processes.keySet() + ")");
    }
    return p;
  }

  /** Ready once the webhook server answers HTTPS with a certificate the test CA signed (any status). */
  private void awaitReady(String manager) {
    URI convert = URI.create("https://127.0.0.1:" + managers.get(manager).webhookPort() + "/convert");
    process(manager).awaitReady(() -> answers(probe, convert), START_TIMEOUT);
  }

  private static Path servingCertificate(KubeControlPlane plane, Path certs) {
    TestCa.Issued serving = plane.ca().server("k3s-webhooks");
    try {
      Files.createDirectories(certs);
      Files.copy(serving.cert(), certs.resolve("tls.crt"), StandardCopyOption.REPLACE_EXISTING);
      Files.copy(serving.key(), certs.resolve("tls.key"), StandardCopyOption.REPLACE_EXISTING);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    return certs;
  }

  private static boolean answers(HttpClient http, URI uri) {
    try {
      http.send(HttpRequest.newBuilder(uri).timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.discarding());
      return true;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static String read(Path file) {
    try {
      return Files.readString(file);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
