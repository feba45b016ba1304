package dev.inplace.worker.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * GenerateUpgradePlan as CAPI v1.13's topology controller calls it (request and response of
 * api/runtime/hooks/v1alpha1/upgrade_plan_types.go), the class read from the management cluster.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class GenerateUpgradePlanContractTest {
  static final ObjectMapper JSON = new ObjectMapper();
  KubernetesClient client;

  @Test
  void answersTheClassVersionsPlanWithWorkersSteppingEveryMinor() throws Exception {
    clusterClass(List.of("v1.30.6", "v1.31.4", "v1.32.3"));
    JsonNode response = new GenerateUpgradePlanHook(client).handle(request("v1.30.6", "v1.30.6", "v1.32.3"));
    assertEquals(JSON.readTree("""
        {"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"GenerateUpgradePlanResponse","status":"Success",
         "message":"","controlPlaneUpgrades":[{"version":"v1.31.4"},{"version":"v1.32.3"}],
         "workersUpgrades":[{"version":"v1.31.4"},{"version":"v1.32.3"}]}"""), response);
  }

  @Test
  void aPlanInplaceCannotFollowIsAFailureThatNamesTheFix() throws Exception {
    clusterClass(List.of());
    JsonNode failure = new GenerateUpgradePlanHook(client).handle(request("v1.30.6", "v1.30.6", "v1.32.3"));
    assertEquals("Failure", failure.get("status").asText());
    assertEquals("cannot plan v1.30.6 -> v1.32.3: inplace upgrades one minor version at a time and ClusterClass fleet/sandbox"
        + " lists no v1.31 version; add one to its spec.kubernetesVersions", failure.get("message").asText());
  }

  @Test
  void aMissingClassIsAFailureAndChangesNothing() throws Exception {
    JsonNode response = new GenerateUpgradePlanHook(client).handle(request("v1.30.6", "v1.30.6", "v1.30.7"));
    assertEquals("Failure", response.get("status").asText());
    assertEquals("ClusterClass fleet/sandbox not found", response.get("message").asText());
  }

  private void clusterClass(List<String> versions) {
    GenericKubernetesResource cc = new GenericKubernetesResource();
    cc.setApiVersion("cluster.x-k8s.io/v1beta2");
    cc.setKind("ClusterClass");
    cc.setMetadata(new ObjectMetaBuilder().withName("sandbox").withNamespace("fleet").build());
    cc.setAdditionalProperty("spec", versions.isEmpty() ? Map.of() : Map.of("kubernetesVersions", versions));
    client.genericKubernetesResources(CapiResources.CLUSTER_CLASS).inNamespace("fleet").resource(cc).create();
  }

  private static JsonNode request(String cp, String workers, String to) throws Exception {
    return JSON.readTree("""
        {"apiVersion":"hooks.runtime.cluster.x-k8s.io/v1alpha1","kind":"GenerateUpgradePlanRequest",
         "cluster":{"metadata":{"name":"edge-1","namespace":"fleet"},"spec":{"topology":{"classRef":{"name":"sandbox"},"version":"%s"}}},
         "fromControlPlaneKubernetesVersion":"%s","fromWorkersKubernetesVersion":"%s","toKubernetesVersion":"%s"}"""
        .formatted(to, cp, workers, to));
  }
}
