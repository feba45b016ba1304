package dev.inplace.testbed;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The test bed's control plane is the real thing: its version, its controllers, its authorizer, its storage. */
class KubeControlPlaneIT {
  @TempDir static Path dir;
  static KubeControlPlane plane;
  static KubernetesClient admin;

  @BeforeAll
  static void start() {
    plane = KubeControlPlane.start("mgmt", dir, TestbedBinaries.locate());
    admin = client(plane.adminKubeconfig());
  }

  @AfterAll
  static void stop() {
    if (admin != null) {
      admin.close();
    }
    if (plane != null) {
      plane.close();
    }
  }

  static KubernetesClient client(Path kubeconfig) {
    try {
      Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
      config.setRequestRetryBackoffLimit(0);
      return new KubernetesClientBuilder().withConfig(config).build();
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  @Test
  void apiServerReportsThePinnedKubernetesVersionNotV000() {
    assertEquals(TestbedBinaries.locate().pinnedVersion("KUBERNETES_VERSION"), admin.getKubernetesVersion().getGitVersion());
  }

  @Test
  void objectsSurviveAKilledAndRestartedApiServer() {
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("restart").endMetadata().build()).create();
    admin.configMaps().inNamespace("restart").resource(new ConfigMapBuilder().withNewMetadata().withName("kept")
        .endMetadata().withData(Map.of("k", "v")).build()).create();
    plane.restartApiServer();
    assertEquals("v", admin.configMaps().inNamespace("restart").withName("kept").get().getData().get("k"));
  }

  @Test
  void disruptionControllerComputesABudgetsStatus() {
    admin.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName("pdb").endMetadata().build()).create();
    admin.policy().v1().podDisruptionBudget().inNamespace("pdb").resource(new PodDisruptionBudgetBuilder()
        .withNewMetadata().withName("web").endMetadata().withNewSpec().withMinAvailable(new IntOrString(1))
        .withNewSelector().addToMatchLabels("app", "web").endSelector().endSpec().build()).create();
    PodDisruptionBudget observed = admin.policy().v1().podDisruptionBudget().inNamespace("pdb").withName("web")
        .waitUntilCondition(p -> p != null && p.getStatus() != null && p.getStatus().getObservedGeneration() != null,
            30, java.util.concurrent.TimeUnit.SECONDS);
    assertEquals(0, observed.getStatus().getDisruptionsAllowed());
    assertTrue(plane.controllerManagerAlive());
  }

  @Test
  void rbacAuthorizerRefusesAUserWithoutRoles() {
    try (KubernetesClient nobody = client(plane.kubeconfigFor("nobody"))) {
      KubernetesClientException refused = org.junit.jupiter.api.Assertions.assertThrows(
          KubernetesClientException.class, () -> nobody.secrets().inNamespace("default").list());
      assertEquals(403, refused.getCode());
    }
  }
}
