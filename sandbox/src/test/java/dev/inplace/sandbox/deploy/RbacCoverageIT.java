package dev.inplace.sandbox.deploy;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.SandboxMain;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.kube.ApiRequest;
import dev.inplace.worker.watch.WatcherOptions;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Comparator;
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
 * identity, not the worker's), and fails when deploy/'s rendered RBAC does not grant one, naming it.
 * Grants nothing used are printed.
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
  }

  private void scenario(String name, String... args) throws Exception {
    List<String> all = new java.util.ArrayList<>(SMALL);
    all.addAll(List.of(args));
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    boolean[] upgradedAll = new boolean[1];
    upgradedAll[0] = SandboxMain.demo(
        DemoOptions.parse(all.toArray(String[]::new)),
        new PrintStream(printed, true, StandardCharsets.UTF_8),
        requests -> recorded.put(name, requests));
    String output = printed.toString(StandardCharsets.UTF_8);
    boolean expectFailure = all.contains("--fail");
    assertEquals(!expectFailure, upgradedAll[0], name + ":\n" + output);
    assertFalse(recorded.get(name).isEmpty(), name + ": the worker's requests were recorded");
    System.out.println("== " + name + ": " + recorded.get(name).size() + " distinct requests");
    recorded.get(name).stream().sorted(Comparator.comparing(ApiRequest::toString)).forEach(r -> System.out.println("  " + r));
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
    System.out.println("== deploy/" + overlay + ": grants nothing used in these scenarios:");
    unused.forEach(u -> System.out.println("  " + u));
    assertTrue(denied.isEmpty(), "deploy/" + overlay + " does not grant what the worker did:\n  "
        + String.join("\n  ", denied));
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

  @Test
  void nothingWasRecordedOutsideTheResourcesTheWorkerOwnsOrReads() {
    // The worker never lists or watches Secrets, whatever the scenario.
    assertTrue(everyRequest().stream().noneMatch(r -> r.resource().equals("secrets") && !r.verb().equals("get")),
        everyRequest().toString());
  }
}
