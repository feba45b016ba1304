package dev.inplace.sandbox.kube;

import static dev.inplace.sandbox.kube.KubeObjects.NS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SandboxApiServerTest {
  private static final ObjectMapper JSON = new ObjectMapper();

  private SandboxApiServer server;
  private KubernetesClient client;

  @BeforeEach
  void start() {
    server = SandboxApiServer.start();
    client = server.client();
  }

  @AfterEach
  void stop() {
    server.close();
  }

  private void create(Pod pod) {
    client.pods().inNamespace(NS).resource(pod).create();
  }

  private HttpResponse<String> postEviction(String name) throws Exception {
    String body =
        """
        {"apiVersion":"policy/v1","kind":"Eviction",
         "metadata":{"name":"%s","namespace":"%s"},"deleteOptions":{}}
        """
            .formatted(name, NS);
    HttpRequest request =
        HttpRequest.newBuilder(URI.create(server.url() + "/api/v1/namespaces/" + NS + "/pods/" + name + "/eviction"))
            .header("Content-Type", "application/json")
            .POST(HttpRequest.BodyPublishers.ofString(body))
            .build();
    return HttpClient.newHttpClient().send(request, HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void readyzAnswersOkUntilTheServerIsMadeUnready() throws Exception {
    HttpResponse<String> ready = get("/readyz");
    assertEquals(200, ready.statusCode());
    assertEquals("ok", ready.body());
    assertEquals("ok", client.raw("/readyz"), "fabric8's raw GET, as the activities read it");

    server.setReady(false);
    HttpResponse<String> failing = get("/readyz?verbose");
    assertEquals(500, failing.statusCode());
    assertTrue(failing.body().contains("[-]etcd failed"), failing.body());
    assertTrue(failing.body().endsWith("readyz check failed\n"), failing.body());

    server.setReady(true);
    assertEquals(200, get("/readyz").statusCode());
  }

  private HttpResponse<String> get(String path) throws Exception {
    return HttpClient.newHttpClient()
        .send(
            HttpRequest.newBuilder(URI.create(server.url() + path)).GET().build(),
            HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void evictionWithoutBudgetDeletesThePodAndAnswers201Success() throws Exception {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));

    HttpResponse<String> response = postEviction("web-1");

    assertEquals(201, response.statusCode());
    JsonNode status = JSON.readTree(response.body());
    assertEquals("Status", status.get("kind").asText());
    assertEquals("v1", status.get("apiVersion").asText());
    assertEquals("Success", status.get("status").asText());
    assertNull(client.pods().inNamespace(NS).withName("web-1").get());
  }

  @Test
  void evictionThatWouldViolateTheBudgetAnswers429WithTheRealStatusShape() throws Exception {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));
    create(KubeObjects.replicaPod("web-2", "web-rs", "web", "w2"));
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.minAvailable("web-pdb", "web", new IntOrString(2))).create();

    HttpResponse<String> response = postEviction("web-1");

    assertEquals(429, response.statusCode());
    JsonNode status = JSON.readTree(response.body());
    assertEquals("Status", status.get("kind").asText());
    assertEquals("Failure", status.get("status").asText());
    assertEquals("TooManyRequests", status.get("reason").asText());
    assertEquals(429, status.get("code").asInt());
    assertEquals(
        "Cannot evict pod as it would violate the pod's disruption budget.",
        status.get("message").asText());
    JsonNode cause = status.get("details").get("causes").get(0);
    assertEquals("DisruptionBudget", cause.get("reason").asText());
    assertEquals(
        "The disruption budget web-pdb needs 2 healthy pods and has 2 currently",
        cause.get("message").asText());
    assertNotNull(client.pods().inNamespace(NS).withName("web-1").get(), "refused: pod stays");
  }

  @Test
  void minAvailableOneLetsOneOfTwoHealthyPodsGoThenRefuses() {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));
    create(KubeObjects.replicaPod("web-2", "web-rs", "web", "w2"));
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.minAvailable("web-pdb", "web", new IntOrString(1))).create();

    assertTrue(client.pods().inNamespace(NS).withName("web-1").evict());
    assertFalse(client.pods().inNamespace(NS).withName("web-2").evict());

    assertNull(client.pods().inNamespace(NS).withName("web-1").get());
    assertNotNull(client.pods().inNamespace(NS).withName("web-2").get());
  }

  @Test
  void maxUnavailablePercentIsScaledAgainstTheReplicaSetsReplicas() {
    client.apps().replicaSets().inNamespace(NS).resource(KubeObjects.replicaSet("web-rs", "web", 4)).create();
    for (int i = 1; i <= 4; i++) {
      create(KubeObjects.replicaPod("web-" + i, "web-rs", "web", "w1"));
    }
    // 25% of 4 rounds up to 1: one disruption at a time.
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.maxUnavailable("web-pdb", "web", new IntOrString("25%"))).create();

    assertTrue(client.pods().inNamespace(NS).withName("web-1").evict());
    assertFalse(
        client.pods().inNamespace(NS).withName("web-2").evict(),
        "3 healthy of 4 expected: the budget is spent although only 3 pods exist");
  }

  @Test
  void pendingPodsIgnoreTheBudgetWhileRunningOnesDoNot() {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));
    Pod pending = KubeObjects.replicaPod("web-2", "web-rs", "web", "w1");
    pending.getStatus().setPhase("Pending");
    create(pending);
    client.policy().v1().podDisruptionBudget().inNamespace(NS)
        .resource(KubeObjects.maxUnavailable("web-pdb", "web", new IntOrString(0))).create();

    assertFalse(client.pods().inNamespace(NS).withName("web-1").evict());
    assertTrue(client.pods().inNamespace(NS).withName("web-2").evict());
  }

  @Test
  void evictingAMissingPodAnswers404() throws Exception {
    HttpResponse<String> response = postEviction("ghost");

    assertEquals(404, response.statusCode());
    assertEquals("NotFound", JSON.readTree(response.body()).get("reason").asText());
  }

  @Test
  void fieldSelectorOnNodeNameFiltersNamespacedAndAllNamespaceListsWithLabels() {
    create(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1"));
    create(KubeObjects.replicaPod("web-2", "web-rs", "web", "w2"));
    create(KubeObjects.replicaPod("api-1", "api-rs", "api", "w1"));
    client.pods().inNamespace("other")
        .resource(new PodBuilder(KubeObjects.replicaPod("web-9", "web-rs", "web", "w1"))
            .editMetadata().withNamespace("other").endMetadata().build())
        .create();

    List<String> allOnW1 =
        names(client.pods().inAnyNamespace().withField("spec.nodeName", "w1").list().getItems());
    List<String> webOnW1InShop =
        names(client.pods().inNamespace(NS).withField("spec.nodeName", "w1").withLabel("app", "web").list().getItems());
    List<String> notOnW1 =
        names(client.pods().inAnyNamespace().withoutField("spec.nodeName", "w1").list().getItems());

    assertEquals(List.of("api-1", "web-1", "web-9"), allOnW1);
    assertEquals(List.of("web-1"), webOnW1InShop);
    assertEquals(List.of("web-2"), notOnW1);
  }

  @Test
  void malformedFieldSelectorAnswers400() throws Exception {
    HttpResponse<String> response =
        HttpClient.newHttpClient()
            .send(
                HttpRequest.newBuilder(URI.create(server.url() + "/api/v1/pods?fieldSelector=nonsense"))
                    .build(),
                HttpResponse.BodyHandlers.ofString());

    assertEquals(400, response.statusCode());
    assertEquals("BadRequest", JSON.readTree(response.body()).get("reason").asText());
  }

  @Test
  void kubeconfigReachesTheServerAndCustomResourcesWork() {
    server.registerCustomResource("cluster.x-k8s.io", "v1beta2", "Machine", "machines", true);
    ResourceDefinitionContext machines =
        new ResourceDefinitionContext.Builder()
            .withGroup("cluster.x-k8s.io").withVersion("v1beta2").withKind("Machine")
            .withPlural("machines").withNamespaced(true).build();
    try (KubernetesClient other = server.newClient()) {
      other.genericKubernetesResources(machines).inNamespace(NS)
          .resource(
              new GenericKubernetesResourceBuilder()
                  .withApiVersion("cluster.x-k8s.io/v1beta2").withKind("Machine")
                  .withNewMetadata().withNamespace(NS).withName("m1").endMetadata()
                  .withAdditionalProperties(Map.of("spec", Map.of("version", "v1.30.5")))
                  .build())
          .create();

      GenericKubernetesResource stored =
          client.genericKubernetesResources("cluster.x-k8s.io/v1beta2", "Machine").inNamespace(NS)
              .withName("m1").get();
      assertEquals(Map.of("version", "v1.30.5"), stored.getAdditionalProperties().get("spec"));
      assertTrue(server.url().startsWith("http://127.0.0.1:"));
    }
  }

  private static List<String> names(List<Pod> pods) {
    return pods.stream().map(p -> p.getMetadata().getName()).sorted().toList();
  }
}
