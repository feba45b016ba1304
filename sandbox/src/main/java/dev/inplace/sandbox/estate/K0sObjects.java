package dev.inplace.sandbox.estate;

import static dev.inplace.sandbox.estate.Estate.CONTROL_PLANE;
import static dev.inplace.sandbox.estate.Estate.NAMESPACE;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.Map;

/**
 * The k0smotron side of the sandbox's CAPI cluster (docs/k0s.md): a K0sControlPlane (v1beta2, its
 * {@code spec.version} the k0s release, update strategy InPlace) and per pool a
 * K0sWorkerConfigTemplate that pins the version new workers bootstrap with.
 */
final class K0sObjects {
  private K0sObjects() {}

  static void seedControlPlane(KubernetesClient client, EstateSpec spec, Map<String, String> clusterLabel) {
    Estate.create(client, CapiObjects.object(CapiObjects.K0S_CONTROL_PLANE, NAMESPACE, CONTROL_PLANE, clusterLabel, Map.of(
        "replicas", spec.controlPlanes(),
        "version", spec.fromVersion(),
        "updateStrategy", "InPlace",
        "k0sConfigSpec", Map.of("args", java.util.List.of("--enable-worker=false")),
        "machineTemplate", Map.of("infrastructureRef", Map.of(
            "apiVersion", "infrastructure.cluster.x-k8s.io/v1beta1", "kind", "Metal3MachineTemplate", "name", CONTROL_PLANE)))));
  }

  static void seedWorkerConfigTemplate(KubernetesClient client, EstateSpec spec, String pool, Map<String, String> clusterLabel) {
    Estate.create(client, CapiObjects.object(CapiObjects.K0S_WORKER_CONFIG_TEMPLATE, NAMESPACE, pool, clusterLabel,
        Map.of("template", Map.of("spec", Map.of("version", spec.fromVersion(), "k0sInstallDir", "/usr/local/bin")))));
  }
}
