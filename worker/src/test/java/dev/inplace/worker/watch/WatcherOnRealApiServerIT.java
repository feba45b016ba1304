package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.worker.realkube.RealManagementCluster;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaPropsBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The watcher on the test bed's real kube-apiserver, which ends watches as a production server does:
 * killed and restarted (every watch drops), and with etcd's history compacted meanwhile, so that the
 * informers' resumed watches are answered 410 Gone and must list again. A resource created after all
 * that still gets its run, and none gets a second one.
 */
@Timeout(300)
class WatcherOnRealApiServerIT {
  /** The CAPI kinds the watcher reads, as schemaless stand-ins: this proof is about the watcher, not CAPI. */
  private static final List<ResourceDefinitionContext> STAND_INS = List.of(
      CapiResources.CLUSTER, CapiResources.MACHINE, CapiResources.MACHINE_SET, CapiResources.MACHINE_DEPLOYMENT,
      CapiResources.KTHREES_CONTROL_PLANE);

  private KubeControlPlane plane;
  private KubernetesClient kube;
  private WatcherHarness h;

  @BeforeEach
  void setUp() {
    plane = RealManagementCluster.plane();
    kube = RealManagementCluster.adminClient();
    STAND_INS.forEach(this::standIn);
    h = new WatcherHarness(kube, plane.adminKubeconfigYaml());
    FakeControlPlaneUpgrade.NODES.forEach(n -> h.estate.setKubelet(n, TestEstate.TO));
  }

  @AfterEach
  void tearDown() {
    if (h != null) {
      h.close();
    }
    if (kube != null) {
      kube.close();
    }
  }

  @Test
  void aResourceCreatedAfterARestartAndA410GoneStillGetsItsRunAndNoneGetsTwo() throws Exception {
    h.watcher(WatcherHarness.fast());
    WorkersUpgrade first = h.create(TestEstate.workersUpgrade("before-restart", TestEstate.spec(new WorkersUpgradeSpec())
        .setMachineDeployments(List.of("md-a"))));
    String firstRun = runId(first);
    Awaitility.await().atMost(WatcherHarness.WAIT).until(() -> h.starts.contains(firstRun));
    String staleVersion = kube.resources(WorkersUpgrade.class).inNamespace(TestEstate.NAMESPACE)
        .withName("before-restart").get().getMetadata().getResourceVersion();

    plane.killApiServer();
    long compactedAt = compactEtcdPast(staleVersion);
    plane.startApiServer();

    // The server the watcher reconnects to answers a watch from before the compaction with 410 Gone.
    assertEquals(410, watchStatusFrom(String.valueOf(Long.parseLong(staleVersion))), "a watch from " + staleVersion
        + " (compacted at " + compactedAt + ") is refused as too old");

    WorkersUpgrade second = h.create(TestEstate.workersUpgrade("after-restart", TestEstate.spec(new WorkersUpgradeSpec())
        .setMachineDeployments(List.of("md-b"))));
    String secondRun = runId(second);
    Awaitility.await().atMost(Duration.ofSeconds(60)).until(() -> h.starts.contains(secondRun));
    assertEquals(1, h.starts.stream().filter(firstRun::equals).count(), "the first resource's run started once: " + h.starts);
    assertEquals(1, h.starts.stream().filter(secondRun::equals).count(), "the second resource's run started once: " + h.starts);
  }

  private static String runId(WorkersUpgrade cr) {
    String pool = cr.getSpec().getMachineDeployments().get(0);
    return WorkflowIds.workersUpgradeForResource(TestEstate.NAMESPACE, cr.getMetadata().getName(), cr.getMetadata().getUid(), pool);
  }

  /**
   * Writes keys outside the API server's prefix straight into etcd (the API server is down), then
   * compacts etcd's history at the newest revision: every revision the watcher has seen is gone.
   */
  private long compactEtcdPast(String resourceVersion) throws Exception {
    HttpClient http = HttpClient.newHttpClient();
    long revision = 0;
    for (int i = 0; i < 20; i++) {
      String body = "{\"key\":\"" + b64("/inplace-test/filler-" + i) + "\",\"value\":\"" + b64("x") + "\"}";
      String answer = post(http, "/v3/kv/put", body);
      Matcher m = Pattern.compile("\"revision\":\"?(\\d+)").matcher(answer);
      assertTrue(m.find(), answer);
      revision = Long.parseLong(m.group(1));
    }
    assertTrue(revision > Long.parseLong(resourceVersion), "etcd moved past " + resourceVersion);
    post(http, "/v3/kv/compaction", "{\"revision\":\"" + revision + "\",\"physical\":true}");
    return revision;
  }

  private String post(HttpClient http, String path, String body) throws Exception {
    HttpResponse<String> response = http.send(HttpRequest.newBuilder(URI.create(plane.etcdUrl() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body)).build(), HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode(), path + ": " + response.body());
    return response.body();
  }

  /** Opens a watch on ConfigMaps from {@code resourceVersion}; returns the HTTP code the server closes it with. */
  private int watchStatusFrom(String resourceVersion) throws Exception {
    CompletableFuture<Integer> code = new CompletableFuture<>();
    try (var watch = kube.configMaps().inAnyNamespace().withResourceVersion(resourceVersion).watch(new Watcher<ConfigMap>() {
      @Override
      public void eventReceived(Action action, ConfigMap resource) {}

      @Override
      public void onClose(WatcherException cause) {
        code.complete(cause.asClientException().getCode());
      }
    })) {
      return code.get(30, TimeUnit.SECONDS);
    } catch (io.fabric8.kubernetes.client.KubernetesClientException refusedAtOnce) {
      return refusedAtOnce.getCode();
    }
  }

  private static String b64(String s) {
    return Base64.getEncoder().encodeToString(s.getBytes(StandardCharsets.UTF_8));
  }

  private void standIn(ResourceDefinitionContext kind) {
    kube.apiextensions().v1().customResourceDefinitions().resource(new CustomResourceDefinitionBuilder()
        .withNewMetadata().withName(kind.getPlural() + "." + kind.getGroup()).endMetadata()
        .withNewSpec().withGroup(kind.getGroup()).withScope("Namespaced")
        .withNewNames().withKind(kind.getKind()).withPlural(kind.getPlural())
        .withSingular(kind.getKind().toLowerCase(Locale.ROOT)).withListKind(kind.getKind() + "List").endNames()
        .addNewVersion().withName(kind.getVersion()).withServed(true).withStorage(true)
        .withNewSchema().withOpenAPIV3Schema(new JSONSchemaPropsBuilder().withType("object")
            .withXKubernetesPreserveUnknownFields(true).build()).endSchema().endVersion().endSpec().build())
        .serverSideApply();
    kube.apiextensions().v1().customResourceDefinitions().withName(kind.getPlural() + "." + kind.getGroup()).waitUntilCondition(
        c -> c != null && c.getStatus() != null && c.getStatus().getConditions() != null && c.getStatus().getConditions().stream()
            .anyMatch(x -> "Established".equals(x.getType()) && "True".equals(x.getStatus())), 30, TimeUnit.SECONDS);
  }
}
