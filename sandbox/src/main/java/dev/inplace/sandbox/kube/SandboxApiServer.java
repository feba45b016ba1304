package dev.inplace.sandbox.kube;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.kubernetes.client.utils.Serialization;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import java.io.Closeable;
import java.net.InetAddress;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Queue;

/**
 * An in-memory Kubernetes API server for the sandbox: fabric8's mock in CRUD mode on
 * {@code http://127.0.0.1:<random port>}, with a dispatcher that answers pod evictions
 * (PodDisruptionBudgets honoured, 201/429 with the real Status shapes), filters lists by field
 * selector (e.g. {@code spec.nodeName}) and answers {@code GET /readyz}, which the stock mock does
 * not.
 *
 * <p>Every request is recorded with the bearer token it carried ({@link #requestsBy}), so a test can
 * check one client's requests against RBAC rules (the worker's client has its own token).
 *
 * <p>Still not like a real server (see reference/stack.md): server-side apply and strategic merge
 * patch (415), JSON merge patch stores {@code null} instead of removing the key, no admission, no
 * garbage collection, deletes are immediate (no grace period).
 */
public final class SandboxApiServer implements Closeable {
  private final KubernetesMockServer server;
  private final SandboxDispatcher dispatcher;
  private final KubernetesClient client;
  private final String url;

  /** Starts a server on a free loopback port. */
  public static SandboxApiServer start() {
    return new SandboxApiServer(0);
  }

  /** Starts a server on {@code 127.0.0.1:port} (0: a free port), e.g. the local stack's fixed ports. */
  public static SandboxApiServer start(int port) {
    return new SandboxApiServer(port);
  }

  @SuppressWarnings("deprecation") // the mock's own default; its expectations need fabric8's mapper
  private SandboxApiServer(int port) {
    Map<ServerRequest, Queue<ServerResponse>> responses = new HashMap<>();
    dispatcher = new SandboxDispatcher(responses);
    server =
        new KubernetesMockServer(
            new Context(Serialization.jsonMapper()),
            new MockWebServer(),
            responses,
            dispatcher,
            false);
    server.start(InetAddress.getLoopbackAddress(), port);
    url = "http://127.0.0.1:" + server.getPort();
    client = newClient();
  }

  /** A client for this server (namespace {@code default}); closed with the server. */
  public KubernetesClient client() {
    return client;
  }

  /**
   * A new client with its own connection pool, built from {@link #kubeconfig()}. Like the
   * production workload clients it does not retry: a refused eviction (429) answers at once
   * instead of after fabric8's ~10 retries.
   */
  public KubernetesClient newClient() {
    return newClient(ADMIN_TOKEN);
  }

  /** As {@link #newClient()}, for a caller known by this bearer token (its requests are recorded apart). */
  public KubernetesClient newClient(String token) {
    Config config = Config.fromKubeconfig(kubeconfig(token));
    config.setRequestRetryBackoffLimit(0);
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  /** The distinct requests (method, verb, group, resource, subresource, namespace) made with this token. */
  public java.util.Set<ApiRequest> requestsBy(String token) {
    return dispatcher.requestsBy(token);
  }

  /**
   * Makes {@code GET /readyz} answer 200 {@code ok} (the default) or, when false, 500 with a failed
   * etcd check, as a kube-apiserver whose datastore is unavailable does.
   */
  public void setReady(boolean ready) {
    dispatcher.setReady(ready);
  }

  /** {@code http://127.0.0.1:<port>}. */
  public String url() {
    return url;
  }

  /** The token of {@link #client()} and of {@link #kubeconfig()}: the estate's own administrator. */
  public static final String ADMIN_TOKEN = "sandbox-token";
  /** The worker's service account token (the estate's worker client). */
  public static final String WORKER_TOKEN = "inplace-worker";
  /** A Prometheus service account's token, bound to {@code inplace-metrics-reader} (TokenReview knows it). */
  public static final String METRICS_READER_TOKEN = "sandbox-prometheus";

  /** A kubeconfig for this server, as CAPI stores it in {@code <cluster>-kubeconfig}. */
  public String kubeconfig() {
    return kubeconfig(ADMIN_TOKEN);
  }

  /** A kubeconfig for this server whose user authenticates with this bearer token. */
  public String kubeconfig(String token) {
    return """
        apiVersion: v1
        kind: Config
        clusters:
        - name: sandbox
          cluster:
            server: %s
        contexts:
        - name: sandbox
          context:
            cluster: sandbox
            namespace: default
            user: sandbox-admin
        current-context: sandbox
        users:
        - name: sandbox-admin
          user:
            token: %s
        """
        .formatted(url, token);
  }

  /**
   * Creates a CRD (one served and stored version, any fields, status subresource like CAPI's) so
   * generic resources of that kind are discoverable and stored.
   */
  public void registerCustomResource(
      String group, String version, String kind, String plural, boolean namespaced) {
    CustomResourceDefinition crd =
        new CustomResourceDefinitionBuilder()
            .withNewMetadata()
            .withName(plural + "." + group)
            .endMetadata()
            .withNewSpec()
            .withGroup(group)
            .withScope(namespaced ? "Namespaced" : "Cluster")
            .withNewNames()
            .withKind(kind)
            .withPlural(plural)
            .withSingular(kind.toLowerCase(Locale.ROOT))
            .withListKind(kind + "List")
            .endNames()
            .addNewVersion()
            .withName(version)
            .withServed(true)
            .withStorage(true)
            .withNewSchema()
            .withOpenAPIV3Schema(
                new JSONSchemaPropsBuilder()
                    .withType("object")
                    .withXKubernetesPreserveUnknownFields(true)
                    .build())
            .endSchema()
            .withNewSubresources()
            .withNewStatus()
            .endStatus()
            .endSubresources()
            .endVersion()
            .endSpec()
            .build();
    client.apiextensions().v1().customResourceDefinitions().resource(crd).createOr(r -> r.update());
  }

  @Override
  public void close() {
    client.close();
    server.shutdown();
  }
}
