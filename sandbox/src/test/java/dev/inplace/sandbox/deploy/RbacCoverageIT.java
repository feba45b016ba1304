package dev.inplace.sandbox.deploy;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.SandboxMain;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.kube.ApiRequest;
import dev.inplace.sandbox.kube.SandboxApiServer;
import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.intake.IntakeRefusal;
import dev.inplace.worker.intake.IntakeUnavailable;
import dev.inplace.worker.intake.RunIntake;
import dev.inplace.worker.observe.KubernetesMetricsAccess;
import dev.inplace.worker.observe.ObservabilityServer;
import dev.inplace.worker.observe.Readiness;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import dev.inplace.worker.watch.WatcherOptions.LeaderElection;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.coordination.v1.Lease;
import io.fabric8.kubernetes.api.model.rbac.Role;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.testing.TestWorkflowEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Collection;
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
    theExtensionPlansAClusterClassUpgrade();
    // A verify fault fails by VerifyTimeout: 5 s of waiting for Ready prove the same path as the default 20 s.
    scenario("k3s, a node fails and is rolled back, skipped", "--fail", "worker-1:verify", "--on-failure", "skip",
        "--ready-timeout", "5");
    // Reads the administrator's InplaceHostProfile the resources name (and refuses its binDir: issue 34).
    scenario("k3s, the resources name a host profile whose binDir is refused", "--bin-dir", "/run/evil");
    twoReplicasCompeteForTheWatcherLease();
    aWatcherOfOneNamespace();
    prometheusScrapesTheMetrics();
  }

  /**
   * The extension's GenerateUpgradePlan for a ClusterClass cluster (the topology controller's call,
   * which the sandbox's CAPI simulator does not make): it reads the Cluster's class, as the worker.
   */
  private void theExtensionPlansAClusterClassUpgrade() throws Exception {
    try (SandboxApiServer api = SandboxApiServer.start();
        KubernetesClient worker = api.newClient(Estate.WORKER_TOKEN)) {
      io.fabric8.kubernetes.api.model.GenericKubernetesResource cc = new io.fabric8.kubernetes.api.model.GenericKubernetesResource();
      cc.setApiVersion("cluster.x-k8s.io/v1beta2");
      cc.setKind("ClusterClass");
      cc.setMetadata(new io.fabric8.kubernetes.api.model.ObjectMetaBuilder().withName("edge-class").withNamespace(Estate.NAMESPACE).build());
      cc.setAdditionalProperty("spec", Map.of("kubernetesVersions", List.of("v1.30.6", "v1.31.2")));
      api.client().genericKubernetesResources(dev.inplace.activities.capi.CapiResources.CLUSTER_CLASS).inNamespace(Estate.NAMESPACE)
          .resource(cc).create();
      com.fasterxml.jackson.databind.JsonNode answer = dev.inplace.worker.extension.CapiExtension.answerGenerateUpgradePlan(worker,
          new com.fasterxml.jackson.databind.ObjectMapper().readTree("""
              {"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"GenerateUpgradePlanRequest",
               "cluster":{"metadata":{"name":"edge-1","namespace":"%s"},"spec":{"topology":{"classRef":{"name":"edge-class"},"version":"v1.31.2"}}},
               "fromControlPlaneKubernetesVersion":"v1.30.6","fromWorkersKubernetesVersion":"v1.30.6","toKubernetesVersion":"v1.31.2"}"""
              .formatted(Estate.NAMESPACE)));
      assertEquals("Success", answer.path("status").asText(), answer.toString());
      record(EXTENSION + ": GenerateUpgradePlan for a ClusterClass cluster", new HashSet<>(api.requestsBy(Estate.WORKER_TOKEN)));
    }
  }

  private static final String ONE_NAMESPACE = "a watcher of one namespace (INPLACE_WATCH_NAMESPACE)";

  /**
   * deploy/namespaced's watcher: with a watched namespace its informers list and watch the upgrade
   * resources there, never across namespaces (the namespaced overlay grants them only there).
   */
  private void aWatcherOfOneNamespace() throws Exception {
    TestWorkflowEnvironment temporal = TestWorkflowEnvironment.newInstance();
    try (SandboxApiServer api = SandboxApiServer.start();
        KubernetesClient worker = api.newClient(Estate.WORKER_TOKEN)) {
      InplaceCrds.install(api.client());
      UpgradeWatcher watcher = UpgradeWatcher.start(worker, temporal.getWorkflowClient(), "rbac",
          WatcherOptions.defaults().inNamespace(Estate.NAMESPACE));
      try {
        await().atMost(Duration.ofSeconds(30)).until(() -> List.of("controlplaneupgrades", "workersupgrades").stream()
            .allMatch(resource -> api.requestsBy(Estate.WORKER_TOKEN).stream()
                .anyMatch(r -> r.resource().equals(resource) && r.verb().equals("watch"))));
      } finally {
        watcher.close();
        temporal.close();
      }
      Set<ApiRequest> requests = new HashSet<>(api.requestsBy(Estate.WORKER_TOKEN));
      assertTrue(requests.stream().filter(r -> isUpgradeResource(r)).allMatch(r -> r.namespace().equals(Estate.NAMESPACE)),
          "a watcher of one namespace reads the upgrade resources only there: " + requests);
      record(ONE_NAMESPACE, requests);
    }
  }

  private static boolean isUpgradeResource(ApiRequest r) {
    return r.resource().equals("controlplaneupgrades") || r.resource().equals("workersupgrades");
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
    return recorded.entrySet().stream().filter(e -> !e.getKey().startsWith(EXTENSION))
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

  /**
   * The estate's clusters live in {@link Estate#NAMESPACE}; under an overlay they live in the
   * namespaces it grants: deploy/cluster-namespaces' list (default, extension) or the watched
   * namespace (namespaced). Each request made in the estate's namespace is made in each of those.
   */
  private static Set<ApiRequest> movedTo(Set<ApiRequest> requests, Collection<String> namespaces) {
    return requests.stream()
        .flatMap(r -> r.namespace().equals(Estate.NAMESPACE)
            ? namespaces.stream().map(ns -> new ApiRequest(r.method(), r.verb(), r.apiGroup(), r.resource(),
                r.subresource(), ns, r.path().replace("/namespaces/" + Estate.NAMESPACE, "/namespaces/" + ns)))
            : java.util.stream.Stream.of(r))
        .collect(Collectors.toSet());
  }

  /** The namespaces deploy/cluster-namespaces lists (the Roles that read Secrets there). */
  private static Set<String> listedNamespaces(List<HasMetadata> objects) {
    Set<String> listed = Kustomize.all(objects, Role.class).stream()
        .filter(r -> r.getMetadata().getName().equals("inplace-worker-config"))
        .map(r -> r.getMetadata().getNamespace()).collect(Collectors.toCollection(TreeSet::new));
    assertFalse(listed.isEmpty(), "the overlay lists namespaces that hold clusters");
    return listed;
  }

  private static String watchedNamespace(List<HasMetadata> objects) {
    return Kustomize.one(objects, Deployment.class, SA).getSpec().getTemplate().getSpec().getContainers().get(0)
        .getEnv().stream().filter(e -> e.getName().equals(WatcherOptions.WATCH_NAMESPACE)).findFirst().orElseThrow()
        .getValue();
  }

  /** What each overlay must grant, in the namespaces it grants them in. */
  private Map<String, Set<ApiRequest>> byOverlay() {
    Map<String, Set<ApiRequest>> byOverlay = new LinkedHashMap<>();
    byOverlay.put("default", movedTo(withoutTheExtension(), listedNamespaces(Kustomize.render("default"))));
    byOverlay.put("extension", movedTo(everyRequest(), listedNamespaces(Kustomize.render("extension"))));
    // deploy/namespaced sets INPLACE_WATCH_NAMESPACE: its watcher's requests are the one-namespace
    // watcher's, not the across-namespaces lists and watches of the other scenarios' watcher.
    Set<ApiRequest> namespaced = withoutTheExtension().stream()
        .filter(r -> !(isUpgradeResource(r) && r.namespace().isEmpty())).collect(Collectors.toSet());
    byOverlay.put("namespaced", movedTo(namespaced, List.of(watchedNamespace(Kustomize.render("namespaced")))));
    return byOverlay;
  }

  @Test
  void theDefaultRbacGrantsEveryRequestTheWorkerMadeWithoutTheExtension() {
    assertGranted("default", byOverlay().get("default"));
  }

  @Test
  void theExtensionOverlayGrantsEveryRequestTheWorkerMade() {
    assertGranted("extension", byOverlay().get("extension"));
  }

  @Test
  void theNamespacedOverlayGrantsEveryRequestWhenTheClustersLiveInTheWatchedNamespace() {
    assertGranted("namespaced", byOverlay().get("namespaced"));
  }

  /**
   * The same requests judged by kube-apiserver's RBAC authorizer on the test bed: each overlay's RBAC
   * applied to the real server, one SubjectAccessReview per request as the worker's ServiceAccount.
   * A request the code makes that the deployed RBAC refuses would be a 403 in production.
   */
  @Test
  void theRealAuthorizerAllowsEveryRequestTheWorkerMadeUnderEachOverlay() throws Exception {
    try (RealAuthorizer authorizer = new RealAuthorizer()) {
      for (Map.Entry<String, Set<ApiRequest>> overlay : byOverlay().entrySet()) {
        Set<String> namespaces = overlay.getValue().stream().map(ApiRequest::namespace).filter(n -> !n.isEmpty())
            .collect(Collectors.toCollection(TreeSet::new));
        namespaces.add(Estate.NAMESPACE);
        List<HasMetadata> applied = authorizer.apply(Kustomize.render(overlay.getKey()), namespaces);
        try {
          List<String> refused = overlay.getValue().stream().filter(r -> !authorizer.allows(NS, SA, r))
              .map(Object::toString).sorted().toList();
          assertTrue(refused.isEmpty(), "kube-apiserver refuses, under deploy/" + overlay.getKey() + ", what the worker did:\n  "
              + String.join("\n  ", refused));
          // And it is an authorizer that says no: what the worker never does is refused, and no
          // Secret outside the namespaces the overlay grants is readable (issue 34, H6).
          List<ApiRequest> never = new java.util.ArrayList<>(List.of(
              ApiRequest.of("DELETE", "/api/v1/namespaces/" + Estate.NAMESPACE + "/secrets/x"),
              ApiRequest.of("GET", "/api/v1/secrets"),
              ApiRequest.of("GET", "/api/v1/namespaces/" + Estate.NAMESPACE + "/secrets/x"),
              ApiRequest.of("GET", "/api/v1/namespaces/kube-system/secrets/x"),
              ApiRequest.of("GET", "/api/v1/namespaces/" + NS + "/secrets/x"),
              ApiRequest.of("POST", "/apis/rbac.authorization.k8s.io/v1/clusterrolebindings")));
          if (overlay.getKey().equals("namespaced")) {
            // Nothing namespaced is written outside the watched namespace.
            never.add(ApiRequest.of("PATCH", "/apis/cluster.x-k8s.io/v1beta2/namespaces/" + Estate.NAMESPACE + "/machines/m"));
            never.add(ApiRequest.of("PATCH",
                "/apis/controlplane.cluster.x-k8s.io/v1beta2/namespaces/" + Estate.NAMESPACE + "/kubeadmcontrolplanes/c"));
            never.add(ApiRequest.of("GET", "/apis/upgrade.inplace.dev/v1alpha1/workersupgrades"));
          }
          for (ApiRequest request : never) {
            assertFalse(authorizer.allows(NS, SA, request), "deploy/" + overlay.getKey() + " allows " + request);
          }
        } finally {
          authorizer.remove(applied);
        }
      }
    }
  }

  /**
   * Issue 34, H6, end to end on a real kube-apiserver with deploy/default's RBAC, as the worker's
   * ServiceAccount: the intake reads a listed namespace's ConfigMaps (here: finds none), and in a
   * namespace the list does not name the API server refuses, and the intake says which namespace
   * is missing from which list, instead of a bare 403.
   */
  @Test
  void aClusterInANamespaceTheListDoesNotNameIsRefusedByTheApiServerAndTheIntakeNamesTheList() throws Exception {
    try (RealAuthorizer authorizer = new RealAuthorizer()) {
      List<HasMetadata> objects = Kustomize.render("default");
      String listed = listedNamespaces(objects).iterator().next();
      String unlisted = "team-b";
      List<HasMetadata> applied = authorizer.apply(objects, List.of(listed, unlisted));
      try (KubernetesClient worker = authorizer.clientAs(NS, SA)) {
        RunIntake intake = new RunIntake(worker, ArtifactSourcePolicy.httpsOnly());
        IntakeRefusal none = assertThrows(IntakeRefusal.class, () -> intake.release(listed, "inplace-releases",
            "catalogue.json", "v1.31.2+k3s1", Distribution.K3S, "amd64"));
        assertEquals("ArtifactUnavailable", none.type(), none.getMessage());
        assertEquals("release catalogue ConfigMap " + listed + "/inplace-releases not found", none.getMessage());
        IntakeUnavailable refused = assertThrows(IntakeUnavailable.class, () -> intake.release(unlisted,
            "inplace-releases", "catalogue.json", "v1.31.2+k3s1", Distribution.K3S, "amd64"));
        assertEquals("cannot read ConfigMap team-b/inplace-releases: HTTP 403: the worker may read Secrets and"
            + " ConfigMaps only in the namespaces its RBAC grants (deploy/cluster-namespaces/list/namespaces.yaml,"
            + " or deploy/namespaced's watched namespace), and namespace team-b is not among them"
            + " (docs/install.md: add it)", refused.getMessage());
      } finally {
        authorizer.remove(applied);
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
