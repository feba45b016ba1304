package dev.inplace.testbed;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A real Kubernetes control plane on loopback, built by the test bed: etcd, kube-apiserver (Node and
 * RBAC authorizers and the NodeRestriction admission plugin, as kubeadm sets them up, so a node's
 * identity {@code system:node:<name>} may write only its own Node; the test CA's client
 * certificates and service-account tokens as authentication) and
 * kube-controller-manager running only the controllers the proofs need (disruption for
 * PodDisruptionBudget status, garbage collection, namespace deletion, service accounts). No
 * node-lifecycle controller runs, so nodes registered by the kubelet simulator are never tainted.
 */
public final class KubeControlPlane implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(KubeControlPlane.class);
  /** The controllers kube-controller-manager runs (docs/testbed.md says why these). */
  public static final String CONTROLLERS = "disruption-controller,garbage-collector-controller,namespace-controller,serviceaccount-controller";
  private static final Duration START_TIMEOUT = Duration.ofSeconds(90);

  private final String name;
  private final Path dir;
  private final TestCa ca;
  private final LocalProcess etcd;
  private final LocalProcess apiServer;
  private final LocalProcess controllerManager;
  private final int apiPort;
  private final String etcdUrl;
  private final Path adminKubeconfig;
  private final HttpClient adminHttp;

  private KubeControlPlane(
      String name, Path dir, TestCa ca, LocalProcess etcd, LocalProcess apiServer, LocalProcess controllerManager,
      int apiPort, String etcdUrl, Path adminKubeconfig, HttpClient adminHttp) {
    this.name = name;
    this.dir = dir;
    this.ca = ca;
    this.etcd = etcd;
    this.apiServer = apiServer;
    this.controllerManager = controllerManager;
    this.apiPort = apiPort;
    this.etcdUrl = etcdUrl;
    this.adminKubeconfig = adminKubeconfig;
    this.adminHttp = adminHttp;
  }

  /**
   * Starts a control plane named {@code name} under {@code dir} (its data, certificates, logs and
   * kubeconfigs), building the binaries first if the test bed's cache lacks them.
   */
  public static KubeControlPlane start(String name, Path dir, TestbedBinaries binaries) {
    List<Path> bins = binaries.ensure("etcd", "kube-apiserver", "kube-controller-manager");
    long started = System.nanoTime();
    Path pki = dir.resolve("pki");
    TestCa ca = TestCa.create(pki, "ca");
    TestCa.Issued serving = ca.server("apiserver", "kubernetes", "kubernetes.default", "kubernetes.default.svc", "10.96.0.1");
    TestCa.Issued admin = ca.client("admin", "testbed-admin", "system:masters");
    TestCa.Issued kcmServing = ca.server("controller-manager");
    TestCa.Issued serviceAccount = ca.serviceAccountKeys("sa");

    int etcdClient = freePort();
    int etcdPeer = freePort();
    LocalProcess etcd = LocalProcess.start(name + "-etcd", List.of(
        bins.get(0).toString(), "--name", "default", "--data-dir", dir.resolve("etcd").toString(),
        "--listen-client-urls", "http://127.0.0.1:" + etcdClient, "--advertise-client-urls", "http://127.0.0.1:" + etcdClient,
        "--listen-peer-urls", "http://127.0.0.1:" + etcdPeer, "--initial-advertise-peer-urls", "http://127.0.0.1:" + etcdPeer,
        "--initial-cluster", "default=http://127.0.0.1:" + etcdPeer, "--unsafe-no-fsync", "--log-level", "warn"), dir);
    HttpClient plain = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
    etcd.awaitReady(() -> ok(plain, "http://127.0.0.1:" + etcdClient + "/health"), START_TIMEOUT);

    int apiPort = freePort();
    List<String> apiArgs = new ArrayList<>(List.of(
        bins.get(1).toString(), "--etcd-servers", "http://127.0.0.1:" + etcdClient,
        "--bind-address", "127.0.0.1", "--advertise-address", "127.0.0.1", "--secure-port", String.valueOf(apiPort),
        "--tls-cert-file", serving.cert().toString(), "--tls-private-key-file", serving.key().toString(),
        "--client-ca-file", ca.certificate().toString(),
        "--service-account-key-file", serviceAccount.cert().toString(),
        "--service-account-signing-key-file", serviceAccount.key().toString(),
        "--service-account-issuer", "https://kubernetes.default.svc.cluster.local",
        "--service-cluster-ip-range", "10.96.0.0/16", "--authorization-mode", "Node,RBAC", "--enable-admission-plugins", "NodeRestriction",
        "--allow-privileged=true",
        "--cert-dir", dir.resolve("apiserver-certs").toString(), "--profiling=false"));
    LocalProcess apiServer = LocalProcess.start(name + "-kube-apiserver", apiArgs, dir);
    HttpClient adminHttp = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2))
        .sslContext(PemTls.context(ca.certificate(), admin.cert(), admin.key())).build();
    String server = "https://127.0.0.1:" + apiPort;
    apiServer.awaitReady(() -> ok(adminHttp, server + "/readyz"), START_TIMEOUT);

    Path adminKubeconfig = writeKubeconfig(dir.resolve("admin.kubeconfig"), name, server, ca, admin);
    LocalProcess kcm = LocalProcess.start(name + "-kube-controller-manager", List.of(
        bins.get(2).toString(), "--kubeconfig", adminKubeconfig.toString(),
        "--authentication-kubeconfig", adminKubeconfig.toString(), "--authorization-kubeconfig", adminKubeconfig.toString(),
        "--controllers", CONTROLLERS, "--leader-elect=false", "--use-service-account-credentials=false",
        "--bind-address", "127.0.0.1", "--secure-port", String.valueOf(freePort()),
        "--tls-cert-file", kcmServing.cert().toString(), "--tls-private-key-file", kcmServing.key().toString(),
        "--root-ca-file", ca.certificate().toString(),
        "--service-account-private-key-file", serviceAccount.key().toString()), dir);
    log.info("testbed control plane {} ready on {} in {} ms", name, server, (System.nanoTime() - started) / 1_000_000);
    return new KubeControlPlane(name, dir, ca, etcd, apiServer, kcm, apiPort, "http://127.0.0.1:" + etcdClient, adminKubeconfig, adminHttp);
  }

  /** {@code https://127.0.0.1:<port>}. */
  public String server() {
    return "https://127.0.0.1:" + apiPort;
  }

  /** A kubeconfig as the administrator (group system:masters): for setting up, never for the worker. */
  public Path adminKubeconfig() {
    return adminKubeconfig;
  }

  /** The test CA, to issue webhook serving certificates and further client identities. */
  public TestCa ca() {
    return ca;
  }

  /** A kubeconfig for the user {@code user} in {@code groups}, authenticated by a client certificate. */
  public Path kubeconfigFor(String user, String... groups) {
    String file = "user-" + user.replaceAll("[^A-Za-z0-9.-]", "_");
    return writeKubeconfig(dir.resolve(file + ".kubeconfig"), name, server(), ca, ca.client(file, user, groups));
  }

  /** A kubeconfig that authenticates with a bearer token (a ServiceAccount's, from the TokenRequest API). */
  public String kubeconfigWithToken(String token) {
    return kubeconfigYaml(name, server(), ca.certificatePem(), "    token: " + token + "\n");
  }

  /** The kubeconfig of the administrator as text (the {@code <cluster>-kubeconfig} Secret's value). */
  public String adminKubeconfigYaml() {
    try {
      return Files.readString(adminKubeconfig);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** kill -9 the API server (etcd keeps the state), then start it again and wait until it is ready. */
  public void restartApiServer() {
    killApiServer();
    startApiServer();
  }

  /** kill -9 the API server: every watch and request on it ends at once. */
  public void killApiServer() {
    apiServer.kill();
  }

  /** Starts the killed API server again on the same etcd and waits until it is ready. */
  public void startApiServer() {
    apiServer.restart();
    apiServer.awaitReady(() -> ok(adminHttp, server() + "/readyz"), START_TIMEOUT);
  }

  /**
   * etcd's client URL (plain HTTP on loopback). Its JSON gateway ({@code /v3/kv/put},
   * {@code /v3/kv/compaction}) lets a proof compact history under the API server's feet, so that a
   * watch resumed from an old resourceVersion is answered 410 Gone.
   */
  public String etcdUrl() {
    return etcdUrl;
  }

  public boolean controllerManagerAlive() {
    return controllerManager.isAlive();
  }

  @Override
  public void close() {
    controllerManager.close();
    apiServer.close();
    etcd.close();
  }

  private static Path writeKubeconfig(Path file, String cluster, String server, TestCa ca, TestCa.Issued user) {
    try {
      String auth = "    client-certificate-data: " + base64(Files.readString(user.cert())) + "\n"
          + "    client-key-data: " + base64(Files.readString(user.key())) + "\n";
      return Files.writeString(file, kubeconfigYaml(cluster, server, ca.certificatePem(), auth));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static String kubeconfigYaml(String cluster, String server, String caPem, String userAuth) {
    return "apiVersion: v1\nkind: Config\nclusters:\n- name: " + cluster + "\n  cluster:\n    server: " + server + "\n"
        + "    certificate-authority-data: " + base64(caPem) + "\n"
        + "users:\n- name: user\n  user:\n" + userAuth
        + "contexts:\n- name: " + cluster + "\n  context:\n    cluster: " + cluster + "\n    user: user\n"
        + "current-context: " + cluster + "\n";
  }

  private static String base64(String text) {
    return Base64.getEncoder().encodeToString(text.getBytes(java.nio.charset.StandardCharsets.UTF_8));
  }

  private static boolean ok(HttpClient http, String url) {
    try {
      HttpResponse<String> response = http.send(
          HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(2)).build(), HttpResponse.BodyHandlers.ofString());
      return response.statusCode() == 200;
    } catch (IOException e) {
      return false;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  static int freePort() {
    try (ServerSocket socket = new ServerSocket(0, 0, java.net.InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
