package dev.inplace.sandbox.deploy;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.SandboxMain;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.kube.ApiRequest;
import dev.inplace.sandbox.kube.SandboxApiServer;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.observe.KubernetesMetricsAccess;
import dev.inplace.worker.observe.ObservabilityServer;
import dev.inplace.worker.observe.Readiness;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import dev.inplace.worker.watch.WatcherOptions.LeaderElection;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.testing.TestWorkflowEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInstance;
import org.junit.jupiter.api.Timeout;

/**
 * RBAC from evidence: runs the demo's representative paths (k3s through the custom resources,
 * kubeadm, the CAPI runtime extension on kubeadm), records every request the worker's client made
 * to the management API server (the workload clusters are reached with the CAPI kubeconfig Secret's
 * identity, not the worker's), and fails when deploy/'s rendered RBAC does not grant one, naming it,
 * or grants anything the worker never did. The demo runs one watcher without leader election, so two
 * watcher replicas also compete for the Lease on their own API server.
 */
@TestInstance(TestInstance.Lifecycle.PER_CLASS)
@Timeout(600)
class RbacCoverageIT {
  private static final String NS = "inplace-system";
  private static final String SA = "inplace-worker";
  private static final List<String> SMALL =
      List.of("--control-planes", "1", "--pools", "1", "--workers", "2", "--binary-size-mib", "1");

  /** The one scenario that needs deploy/extension's extra grants (the namespace opt-in check). */
  private static final String EXTENSION = "kubeadm through the CAPI runtime extension";

  /** Scenario name -> the distinct requests the worker made in it. */
  private final Map<String, Set<ApiRequest>> recorded = new LinkedHashMap<>();

  @BeforeAll
  void runTheScenarios() throws Exception {
    scenario("k3s through ControlPlaneUpgrade/WorkersUpgrade resources");
    scenario("kubeadm through the resources", "--distribution", "kubeadm");
    scenario("k0s through the resources", "--distribution", "k0s");
    scenario(EXTENSION, "--distribution", "kubeadm", "--mode", "extension");
    // A verify fault fails by VerifyTimeout: 5 s of waiting for Ready prove the same path as the default 20 s.
    scenario("k3s, a node fails and is rolled back, skipped", "--fail", "worker-1:verify", "--on-failure", "skip",
        "--ready-timeout", "5");
    // Reads the administrator's InplaceHostProfile the resources name (and refuses its binDir: issue 34).
    scenario("k3s, the resources name a host profile whose binDir is refused", "--bin-dir", "/run/evil");
    twoReplicasCompeteForTheWatcherLease();
    prometheusScrapesTheMetrics();
  }

  /** /metrics as deployed: the worker asks the API server who the scraper is and whether it may read them. */
  private void prometheusScrapesTheMetrics() throws Exception {
    try (SandboxApiServer api = SandboxApiServer.start();
        KubernetesClient worker = api.newClient(Estate.WORKER_TOKEN);
        ObservabilityServer server = ObservabilityServer.start("127.0.0.1", 0, () -> "inplace_up 1\n", new Readiness(),
            new KubernetesMetricsAccess(() -> worker))) {
      java.net.http.HttpClient http = java.net.http.HttpClient.newHttpClient();
      for (String token : List.of(SandboxApiServer.METRICS_READER_TOKEN, Estate.WORKER_TOKEN)) {
        java.net.http.HttpResponse<String> scrape = http.send(java.net.http.HttpRequest.newBuilder(
                java.net.URI.create("http://127.0.0.1:" + server.port() + "/metrics"))
            .header("Authorization", "Bearer " + token).build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(token.equals(Estate.WORKER_TOKEN) ? 403 : 200, scrape.statusCode(), scrape.body());
      }
      record(METRICS, new HashSet<>(api.requestsBy(Estate.WORKER_TOKEN)));
    }
  }

  private static final String METRICS = "Prometheus scrapes /metrics";

  /**
   * Leader election as deployed (deploy/ runs it on): replica a takes the Lease and renews it, b reads
   * it and follows, a releases it at close and b takes it over, then releases it. fabric8's Lease
   * lock writes every renewal, release and take-over as a JSON merge patch.
   */
  private void twoReplicasCompeteForTheWatcherLease() throws Exception {
    TestWorkflowEnvironment temporal = TestWorkflowEnvironment.newInstance();
    try (SandboxApiServer api = SandboxApiServer.start();
        KubernetesClient worker = api.newClient(Estate.WORKER_TOKEN)) {
      InplaceCrds.install(api.client());
      UpgradeWatcher a = UpgradeWatcher.start(worker, temporal.getWorkflowClient(), "rbac", replica("replica-a"));
      UpgradeWatcher b = null;
      boolean aClosed = false;
      try {
        await().atMost(Duration.ofSeconds(30)).until(a::isLeading);
        var firstRenewal = lease(api).getSpec().getRenewTime();
        await().atMost(Duration.ofSeconds(30)).until(() -> !firstRenewal.equals(lease(api).getSpec().getRenewTime()));
        b = UpgradeWatcher.start(worker, temporal.getWorkflowClient(), "rbac", replica("replica-b"));
        UpgradeWatcher follower = b;
        await().atMost(Duration.ofSeconds(30)).until(() -> follower.observedLeader().isPresent());
        a.close(); // releases the Lease
        aClosed = true;
        await().atMost(Duration.ofSeconds(30)).until(follower::isLeading);
        assertEquals("replica-b", lease(api).getSpec().getHolderIdentity());
      } finally {
        if (!aClosed) {
          a.close();
        }
        if (b != null) {
          b.close();
        }
        temporal.close();
      }
      record(LEASE, new HashSet<>(api.requestsBy(Estate.WORKER_TOKEN)));
    }
  }

  private static final String LEASE = "two watcher replicas compete for the Lease";

  /** deploy/'s Lease (INPLACE_LEASE_NAME's default) in the worker's namespace, renewed every 250 ms. */
  private static WatcherOptions replica(String identity) {
    return WatcherOptions.defaults().withLeaderElection(new LeaderElection(NS, "inplace-watcher", identity,
        Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofMillis(250)));
  }

  private static Lease lease(SandboxApiServer api) {
    return api.client().leases().inNamespace(NS).withName("inplace-watcher").get();
  }

  private void scenario(String name, String... args) throws Exception {
    List<String> all = new java.util.ArrayList<>(SMALL);
    all.addAll(List.of(args));
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    boolean[] upgradedAll = new boolean[1];
    upgradedAll[0] = SandboxMain.demo(
        DemoOptions.parse(all.toArray(String[]::new)),
        new PrintStream(printed, true, StandardCharsets.UTF_8),
        requests -> record(name, requests));
    String output = printed.toString(StandardCharsets.UTF_8);
    boolean expectFailure = all.contains("--fail") || all.contains("--bin-dir");
    assertEquals(!expectFailure, upgradedAll[0], name + ":\n" + output);
    assertFalse(recorded.get(name).isEmpty(), name + ": the worker's requests were recorded");
  }

  private void record(String scenario, Set<ApiRequest> requests) {
    recorded.put(scenario, requests);
    System.out.println("== " + scenario + ": " + requests.size() + " distinct requests");
    requests.stream().sorted(Comparator.comparing(ApiRequest::toString)).forEach(r -> System.out.println("  " + r));
  }

  private Set<ApiRequest> everyRequest() {
    return recorded.values().stream().flatMap(Set::stream).collect(Collectors.toSet());
  }

  /** What a worker without the extension does: deploy/default and deploy/namespaced must grant it. */
  private Set<ApiRequest> withoutTheExtension() {
    return recorded.entrySet().stream().filter(e -> !e.getKey().equals(EXTENSION))
        .flatMap(e -> e.getValue().stream()).collect(Collectors.toSet());
  }

  private void assertGranted(String overlay, Set<ApiRequest> requests) {
    RbacGrants grants = RbacGrants.of(Kustomize.render(overlay), NS, SA);
    List<String> denied = grants.denied(requests);
    TreeSet<String> unused = grants.unused(requests).stream().map(Object::toString)
        .collect(Collectors.toCollection(TreeSet::new));
    assertTrue(denied.isEmpty(), "deploy/" + overlay + " does not grant what the worker did:\n  "
        + String.join("\n  ", denied));
    assertTrue(unused.isEmpty(), "deploy/" + overlay + " grants what the worker never did in these scenarios:\n  "
        + String.join("\n  ", unused));
  }

  @Test
  void theDefaultRbacGrantsEveryRequestTheWorkerMadeWithoutTheExtension() {
    assertGranted("default", withoutTheExtension());
  }

  @Test
  void theExtensionOverlayGrantsEveryRequestTheWorkerMade() {
    assertGranted("extension", everyRequest());
  }

  @Test
  void theNamespacedOverlayGrantsEveryRequestWhenTheClustersLiveInTheWatchedNamespace() {
    List<HasMetadata> objects = Kustomize.render("namespaced");
    String watched = Kustomize.one(objects, Deployment.class, SA).getSpec().getTemplate().getSpec().getContainers().get(0)
        .getEnv().stream().filter(e -> e.getName().equals(WatcherOptions.WATCH_NAMESPACE)).findFirst().orElseThrow().getValue();
    // The estate's clusters live in "fleet"; with this overlay they live in the watched namespace.
    Set<ApiRequest> moved = withoutTheExtension().stream()
        .map(r -> r.namespace().equals(Estate.NAMESPACE)
            ? new ApiRequest(r.method(), r.verb(), r.apiGroup(), r.resource(), r.subresource(), watched, r.path())
            : r)
        .collect(Collectors.toSet());
    assertGranted("namespaced", moved);
  }

  /**
   * The same requests judged by kube-apiserver's RBAC authorizer on the test bed: each overlay's RBAC
   * applied to the real server, one SubjectAccessReview per request as the worker's ServiceAccount.
   * A request the code makes that the deployed RBAC refuses would be a 403 in production.
   */
  @Test
  void theRealAuthorizerAllowsEveryRequestTheWorkerMadeUnderEachOverlay() throws Exception {
    try (RealAuthorizer authorizer = new RealAuthorizer()) {
      Map<String, Set<ApiRequest>> byOverlay = new LinkedHashMap<>();
      byOverlay.put("default", withoutTheExtension());
      byOverlay.put("extension", everyRequest());
      List<HasMetadata> namespacedObjects = Kustomize.render("namespaced");
      String watched = Kustomize.one(namespacedObjects, Deployment.class, SA).getSpec().getTemplate().getSpec().getContainers().get(0)
          .getEnv().stream().filter(e -> e.getName().equals(WatcherOptions.WATCH_NAMESPACE)).findFirst().orElseThrow().getValue();
      byOverlay.put("namespaced", withoutTheExtension().stream()
          .map(r -> r.namespace().equals(Estate.NAMESPACE)
              ? new ApiRequest(r.method(), r.verb(), r.apiGroup(), r.resource(), r.subresource(), watched, r.path())
              : r)
          .collect(Collectors.toSet()));
      for (Map.Entry<String, Set<ApiRequest>> overlay : byOverlay.entrySet()) {
        Set<String> namespaces = overlay.getValue().stream().map(ApiRequest::namespace).filter(n -> !n.isEmpty())
            .collect(Collectors.toCollection(TreeSet::new));
        List<HasMetadata> applied = authorizer.apply(Kustomize.render(overlay.getKey()), namespaces);
        try {
          List<String> refused = overlay.getValue().stream().filter(r -> !authorizer.allows(NS, SA, r))
              .map(Object::toString).sorted().toList();
          assertTrue(refused.isEmpty(), "kube-apiserver refuses, under deploy/" + overlay.getKey() + ", what the worker did:\n  "
              + String.join("\n  ", refused));
          // And it is an authorizer that says no: what the worker never does is refused.
          for (ApiRequest never : List.of(
              ApiRequest.of("DELETE", "/api/v1/namespaces/" + Estate.NAMESPACE + "/secrets/x"),
              ApiRequest.of("GET", "/api/v1/secrets"),
              ApiRequest.of("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings"))) {
            assertFalse(authorizer.allows(NS, SA, never), "deploy/" + overlay.getKey() + " allows " + never);
          }
        } finally {
          authorizer.remove(applied);
        }
      }
    }
  }

  @Test
  void nothingWasRecordedOutsideTheResourcesTheWorkerOwnsOrReads() {
    // The worker never lists or watches Secrets, whatever the scenario.
    assertTrue(everyRequest().stream().noneMatch(r -> r.resource().equals("secrets") && !r.verb().equals("get")),
        everyRequest().toString());
  }
}
