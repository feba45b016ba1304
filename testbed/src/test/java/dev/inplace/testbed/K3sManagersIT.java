package dev.inplace.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceList;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * cluster-api-k3s's real managers (testbed/versions.env) beside Cluster API's on the test bed's
 * management API server: their CRDs are established and declare the contract they implement, their
 * conversion and admission webhooks answer on loopback, and Cluster API's core controller resolves a
 * KThreesControlPlane by that contract, which the real KThreesControlPlane controller then reconciles.
 */
class K3sManagersIT {
  private static final String CP_V1BETA2 = "controlplane.cluster.x-k8s.io/v1beta2";
  private static final String CP_V1BETA1 = "controlplane.cluster.x-k8s.io/v1beta1";
  private static final List<String> CRDS = List.of("kthreescontrolplanes.controlplane.cluster.x-k8s.io",
      "kthreescontrolplanetemplates.controlplane.cluster.x-k8s.io", "kthreesconfigs.bootstrap.cluster.x-k8s.io",
      "kthreesconfigtemplates.bootstrap.cluster.x-k8s.io");

  @TempDir static Path dir;
  static KubeControlPlane plane;
  static CapiManagers capi;
  static K3sManagers k3s;
  static KubernetesClient admin;

  @BeforeAll
  static void start() {
    TestbedBinaries binaries = TestbedBinaries.locate();
    plane = KubeControlPlane.start("mgmt", dir, binaries);
    capi = CapiManagers.start(plane, dir.resolve("capi"), binaries);
    k3s = K3sManagers.start(plane, dir.resolve("k3s"), binaries);
    admin = KubeControlPlaneIT.client(plane.adminKubeconfig());
  }

  @AfterAll
  static void stop() {
    if (admin != null) {
      admin.close();
    }
    if (k3s != null) {
      k3s.close();
    }
    if (capi != null) {
      capi.close();
    }
    if (plane != null) {
      plane.close();
    }
  }

  @Test
  void itsFourCrdsAreEstablishedLabelledForTheV1beta1ContractAndConvertOnLoopback() {
    for (String name : CRDS) {
      CustomResourceDefinition crd = admin.apiextensions().v1().customResourceDefinitions().withName(name)
          .waitUntilCondition(c -> c != null && c.getStatus() != null && c.getStatus().getConditions().stream()
              .anyMatch(cond -> "Established".equals(cond.getType()) && "True".equals(cond.getStatus())), 30, TimeUnit.SECONDS);
      Map<String, String> labels = crd.getMetadata().getLabels();
      assertEquals("v1beta1_v1beta2", labels.get("cluster.x-k8s.io/v1beta1"), name);
      assertNull(labels.get("cluster.x-k8s.io/v1beta2"), name + " declares no v1beta2 contract");
      if (crd.getSpec().getVersions().size() > 1) {
        String url = crd.getSpec().getConversion().getWebhook().getClientConfig().getUrl();
        assertTrue(url.startsWith("https://127.0.0.1:") && url.endsWith("/convert"), name + ": " + url);
      }
    }
  }

  @Test
  void theControlPlaneWebhookDefaultsAKThreesControlPlaneAndRefusesOneItCannotDecode() {
    String ns = namespace("k3s-defaults");
    GenericKubernetesResource created = controlPlanes(CP_V1BETA2).inNamespace(ns)
        .resource(controlPlane(ns, "cp", "v1.30.6+k3s1")).create();
    Map<String, Object> spec = map(created.getAdditionalProperties().get("spec"));
    assertEquals(1, spec.get("replicas"), "replicas defaulted by the webhook");
    assertEquals(ns, map(map(spec.get("machineTemplate")).get("infrastructureRef")).get("namespace"));
    Map<String, Object> server = map(map(spec.get("kthreesConfigSpec")).get("serverConfig"));
    assertEquals(Boolean.TRUE, server.get("disableCloudController"));
    assertEquals("external", server.get("cloudProviderName"));

    // Its validating webhook accepts every spec (v0.3.1); the mutating one refuses what it cannot decode.
    GenericKubernetesResource wordy = controlPlane(ns, "wordy", "v1.30.6+k3s1");
    map(wordy.getAdditionalProperties().get("spec")).put("replicas", "three");
    KubernetesClientException refused = assertThrows(KubernetesClientException.class,
        () -> controlPlanes(CP_V1BETA2).inNamespace(ns).resource(wordy).create());
    assertTrue(refused.getMessage().contains("admission webhook \"default.kthreescontrolplane.controlplane.cluster.x-k8s.io\" denied the request"),
        refused.getMessage());
    assertNull(controlPlanes(CP_V1BETA2).inNamespace(ns).withName("wordy").get());
  }

  @Test
  void aKThreesControlPlaneWithoutVersionIsAdmittedWithAnEmptyVersionWrittenByItsDefaultingWebhook() {
    // The CRD's schema requires spec.version, but the mutating webhook (which runs first) returns the
    // object as its Go type serialises it, with "version": "", which satisfies "required".
    String ns = namespace("k3s-no-version");
    GenericKubernetesResource created = controlPlanes(CP_V1BETA2).inNamespace(ns)
        .resource(controlPlane(ns, "no-version", null)).create();
    assertEquals("", map(created.getAdditionalProperties().get("spec")).get("version"));
  }

  @Test
  void aV1beta1KThreesControlPlaneIsConvertedByItsManagerAndReadBackAtEitherVersion() {
    String ns = namespace("k3s-convert");
    GenericKubernetesResource old = new GenericKubernetesResource();
    old.setApiVersion(CP_V1BETA1);
    old.setKind("KThreesControlPlane");
    old.setMetadata(new ObjectMetaBuilder().withName("old").withNamespace(ns).build());
    old.setAdditionalProperty("spec", Map.of("version", "v1.30.6+k3s1", "infrastructureTemplate",
        Map.of("apiVersion", "infrastructure.cluster.x-k8s.io/v1beta1", "kind", "AnyMachineTemplate", "name", "tmpl")));
    controlPlanes(CP_V1BETA1).inNamespace(ns).resource(old).create();

    Map<String, Object> asV1beta2 = map(controlPlanes(CP_V1BETA2).inNamespace(ns).withName("old").get()
        .getAdditionalProperties().get("spec"));
    assertEquals("tmpl", map(map(asV1beta2.get("machineTemplate")).get("infrastructureRef")).get("name"));
    assertEquals(1, asV1beta2.get("replicas"), "defaulted by the webhook after conversion to v1beta2");
    Map<String, Object> asV1beta1 = map(controlPlanes(CP_V1BETA1).inNamespace(ns).withName("old").get()
        .getAdditionalProperties().get("spec"));
    assertEquals("tmpl", map(asV1beta1.get("infrastructureTemplate")).get("name"));
  }

  @Test
  void theBootstrapWebhookDefaultsAKThreesConfig() {
    String ns = namespace("k3s-config");
    GenericKubernetesResource config = new GenericKubernetesResource();
    config.setApiVersion("bootstrap.cluster.x-k8s.io/v1beta2");
    config.setKind("KThreesConfig");
    config.setMetadata(new ObjectMetaBuilder().withName("node").withNamespace(ns).build());
    config.setAdditionalProperty("spec", Map.of("version", "v1.30.6+k3s1"));
    GenericKubernetesResource created = admin.genericKubernetesResources("bootstrap.cluster.x-k8s.io/v1beta2", "KThreesConfig")
        .inNamespace(ns).resource(config).create();
    Map<String, Object> server = map(map(created.getAdditionalProperties().get("spec")).get("serverConfig"));
    assertEquals(Boolean.TRUE, server.get("disableCloudController"));
    assertEquals("external", server.get("cloudProviderName"));
  }

  @Test
  void aKThreesControlPlaneIsRefusedWhileItsManagerIsDownAndAdmittedOnceItIsBack() {
    String ns = namespace("k3s-down");
    k3s.kill(K3sManagers.CONTROL_PLANE);
    try {
      KubernetesClientException refused = assertThrows(KubernetesClientException.class,
          () -> controlPlanes(CP_V1BETA2).inNamespace(ns).resource(controlPlane(ns, "while-down", "v1.30.6+k3s1")).create());
      assertTrue(refused.getMessage().contains("failed calling webhook \"default.kthreescontrolplane.controlplane.cluster.x-k8s.io\""),
          refused.getMessage());
      assertNull(controlPlanes(CP_V1BETA2).inNamespace(ns).withName("while-down").get());
    } finally {
      k3s.restart(K3sManagers.CONTROL_PLANE);
    }
    controlPlanes(CP_V1BETA2).inNamespace(ns).resource(controlPlane(ns, "while-down", "v1.30.6+k3s1")).create();
    assertTrue(k3s.allAlive(), k3s.tails());
  }

  @Test
  void clusterApiResolvesAKThreesControlPlaneByItsContractAndTheK3sControllerReconcilesIt() {
    String ns = namespace("k3s-cluster");
    controlPlanes(CP_V1BETA2).inNamespace(ns).resource(controlPlane(ns, "k3s", "v1.30.6+k3s1")).create();
    GenericKubernetesResource cluster = new GenericKubernetesResource();
    cluster.setApiVersion("cluster.x-k8s.io/v1beta2");
    cluster.setKind("Cluster");
    cluster.setMetadata(new ObjectMetaBuilder().withName("k3s").withNamespace(ns).build());
    cluster.setAdditionalProperty("spec", Map.of("controlPlaneRef",
        Map.of("apiGroup", "controlplane.cluster.x-k8s.io", "kind", "KThreesControlPlane", "name", "k3s")));
    admin.genericKubernetesResources("cluster.x-k8s.io/v1beta2", "Cluster").inNamespace(ns).resource(cluster).create();

    // The core Cluster controller finds the KThreesControlPlane's API version from its CRD's contract
    // label and adopts it; the KThreesControlPlane controller then reads the Cluster (at v1beta1,
    // converted by the core) and, its infrastructure counted as provisioned, adds its finalizer.
    GenericKubernetesResource reconciled = controlPlanes(CP_V1BETA2).inNamespace(ns).withName("k3s")
        .waitUntilCondition(cp -> cp != null && cp.getMetadata().getFinalizers().contains("kthrees.controlplane.cluster.x-k8s.io"),
            90, TimeUnit.SECONDS);
    OwnerReference owner = reconciled.getMetadata().getOwnerReferences().stream()
        .filter(o -> "Cluster".equals(o.getKind())).findFirst().orElseThrow(() -> new AssertionError(
            "no Cluster owner reference: " + Serialization.asYaml(reconciled.getMetadata()) + k3s.tails()));
    assertEquals("k3s", owner.getName());
    assertEquals("cluster.x-k8s.io/v1beta2", owner.getApiVersion());
    assertTrue(capi.allAlive() && k3s.allAlive(), capi.tails() + k3s.tails());
  }

  private static MixedOperation<GenericKubernetesResource, GenericKubernetesResourceList, Resource<GenericKubernetesResource>>
      controlPlanes(String apiVersion) {
    return admin.genericKubernetesResources(apiVersion, "KThreesControlPlane");
  }

  /** A v1beta2 KThreesControlPlane with neither replicas nor server defaults, and no version when {@code version} is null. */
  private static GenericKubernetesResource controlPlane(String ns, String name, String version) {
    GenericKubernetesResource cp = new GenericKubernetesResource();
    cp.setApiVersion(CP_V1BETA2);
    cp.setKind("KThreesControlPlane");
    cp.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(ns).build());
    Map<String, Object> spec = new LinkedHashMap<>();
    spec.put("machineTemplate", Map.of("infrastructureRef",
        Map.of("apiVersion", "infrastructure.cluster.x-k8s.io/v1beta1", "kind", "AnyMachineTemplate", "name", "tmpl")));
    if (version != null) {
      spec.put("version", version);
    }
    cp.setAdditionalProperty("spec", spec);
    return cp;
  }

  private static String namespace(String name) {
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(name).endMetadata().build()).create();
    return name;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return (Map<String, Object>) value;
  }
}
