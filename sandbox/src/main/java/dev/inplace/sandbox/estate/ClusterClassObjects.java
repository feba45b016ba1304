package dev.inplace.sandbox.estate;

import static dev.inplace.sandbox.estate.Estate.CLUSTER;
import static dev.inplace.sandbox.estate.Estate.CONTROL_PLANE;
import static dev.inplace.sandbox.estate.Estate.NAMESPACE;

import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * The ClusterClass side of the sandbox (demo {@code --cluster-class}): a ClusterClass {@code
 * edge-1-class} (v1beta2) whose control-plane and worker templates are the estate's own, and the
 * Cluster's {@code spec.topology} naming it with the estate's version, replicas and one
 * MachineDeployment topology per pool. CAPI's topology controller would own the versions of such a
 * cluster; inplace refuses it (docs/capi-extension.md).
 */
public final class ClusterClassObjects {
  public static final String CLASS = CLUSTER + "-class";
  static final String WORKER_CLASS = "default-worker";

  private ClusterClassObjects() {}

  static void seedClass(KubernetesClient client, EstateSpec spec, Map<String, String> clusterLabel) {
    String controlPlaneKind = switch (spec.distribution()) {
      case KUBEADM -> "KubeadmControlPlaneTemplate";
      case K0S -> "K0sControlPlaneTemplate";
      case K3S -> "KThreesControlPlaneTemplate";
    };
    String bootstrapKind = switch (spec.distribution()) {
      case KUBEADM -> "KubeadmConfigTemplate";
      case K0S -> "K0sWorkerConfigTemplate";
      case K3S -> "KThreesConfigTemplate";
    };
    Estate.create(client, CapiObjects.object(CapiObjects.CLUSTER_CLASS, NAMESPACE, CLASS, clusterLabel, Map.of(
        "controlPlane", Map.of(
            "templateRef", CapiObjects.ref(CapiObjects.CONTROL_PLANE_GROUP, controlPlaneKind, CONTROL_PLANE),
            "machineInfrastructure", Map.of("templateRef",
                CapiObjects.ref(CapiObjects.INFRASTRUCTURE_GROUP, "Metal3MachineTemplate", CONTROL_PLANE))),
        "infrastructure", Map.of("templateRef",
            CapiObjects.ref(CapiObjects.INFRASTRUCTURE_GROUP, "Metal3ClusterTemplate", CLUSTER)),
        "workers", Map.of("machineDeployments", List.of(Map.of(
            "class", WORKER_CLASS,
            "bootstrap", Map.of("templateRef",
                CapiObjects.ref("bootstrap.cluster.x-k8s.io", bootstrapKind, CLUSTER + "-workers")),
            "infrastructure", Map.of("templateRef",
                CapiObjects.ref(CapiObjects.INFRASTRUCTURE_GROUP, "Metal3MachineTemplate", CLUSTER + "-workers"))))))));
  }

  /** {@code spec.topology} of the estate's Cluster (v1beta2: {@code classRef}). */
  static Map<String, Object> topology(EstateSpec spec) {
    List<Map<String, Object>> pools = new ArrayList<>();
    for (int p = 0; p < spec.pools(); p++) {
      pools.add(Map.of("class", WORKER_CLASS, "name", spec.poolName(CLUSTER, p), "replicas", spec.workers()));
    }
    return Map.of(
        "classRef", Map.of("name", CLASS),
        "version", spec.fromVersion(),
        "controlPlane", Map.of("replicas", spec.controlPlanes()),
        "workers", Map.of("machineDeployments", pools));
  }
}
