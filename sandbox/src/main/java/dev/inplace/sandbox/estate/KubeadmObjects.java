package dev.inplace.sandbox.estate;

import static dev.inplace.sandbox.estate.Estate.CLUSTER;
import static dev.inplace.sandbox.estate.Estate.CONTROL_PLANE;
import static dev.inplace.sandbox.estate.Estate.NAMESPACE;

import dev.inplace.sandbox.estate.Estate.EstateNode;
import dev.inplace.workflows.api.NodeRole;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The kubeadm side of the sandbox's CAPI cluster, as a management cluster holds it when an in-place
 * upgrade starts: a KubeadmControlPlane whose {@code kubeadmConfigSpec} and machine template were
 * already changed for the target (a new etcd image tag and audit flag, a rotated
 * Metal3MachineTemplate), while each control-plane Machine still carries the old KubeadmConfig,
 * cluster-configuration annotation and cloned-from annotations; a KubeadmConfigTemplate per pool,
 * a KubeadmConfig and a Metal3Machine per Machine.
 */
final class KubeadmObjects {
  /** The machine template the KubeadmControlPlane names now; the Machines were cloned from {@link #OLD_TEMPLATE}. */
  static final String TEMPLATE = CONTROL_PLANE + "-v2";
  static final String OLD_TEMPLATE = CONTROL_PLANE + "-v1";
  static final String TEMPLATE_GROUPKIND = "Metal3MachineTemplate." + CapiObjects.INFRASTRUCTURE_GROUP;

  private KubeadmObjects() {}

  static void seedControlPlane(KubernetesClient client, EstateSpec spec, Map<String, String> clusterLabel) {
    Map<String, Object> kubeadmConfigSpec = new LinkedHashMap<>();
    kubeadmConfigSpec.put("clusterConfiguration", clusterConfiguration("3.5.15-0", true));
    kubeadmConfigSpec.put("initConfiguration", nodeRegistration());
    kubeadmConfigSpec.put("joinConfiguration", nodeRegistration());
    Estate.create(client, CapiObjects.object(CapiObjects.KUBEADM_CONTROL_PLANE, NAMESPACE, CONTROL_PLANE, clusterLabel, Map.of(
        "replicas", spec.controlPlanes(),
        "version", spec.fromVersion(),
        "kubeadmConfigSpec", kubeadmConfigSpec,
        "rollout", Map.of("strategy", Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxSurge", 0))),
        "machineTemplate", Map.of("spec", Map.of("infrastructureRef",
            CapiObjects.ref(CapiObjects.INFRASTRUCTURE_GROUP, "Metal3MachineTemplate", TEMPLATE))))));
  }

  static void seedMachines(KubernetesClient client, EstateSpec spec, List<EstateNode> nodes) {
    for (int p = 0; p < spec.pools(); p++) {
      String pool = spec.poolName(CLUSTER, p);
      Estate.create(client, CapiObjects.object(CapiObjects.KUBEADM_CONFIG_TEMPLATE, NAMESPACE, pool,
          Map.of("cluster.x-k8s.io/cluster-name", CLUSTER),
          Map.of("template", Map.of("spec", Map.of("joinConfiguration", nodeRegistration())))));
    }
    boolean first = true;
    for (EstateNode node : nodes) {
      Map<String, Object> config = new LinkedHashMap<>();
      Map<String, String> infraAnnotations;
      if (node.role() == NodeRole.CONTROL_PLANE) {
        config.put("clusterConfiguration", clusterConfiguration("3.5.12-0", false));
        config.put(first ? "initConfiguration" : "joinConfiguration", nodeRegistration());
        first = false;
        infraAnnotations = Map.of(
            "cluster.x-k8s.io/cloned-from-name", OLD_TEMPLATE,
            "cluster.x-k8s.io/cloned-from-groupkind", TEMPLATE_GROUPKIND);
      } else {
        config.put("joinConfiguration", nodeRegistration());
        infraAnnotations = Map.of(
            "cluster.x-k8s.io/cloned-from-name", node.pool(),
            "cluster.x-k8s.io/cloned-from-groupkind", TEMPLATE_GROUPKIND);
      }
      Map<String, String> labels = Map.of("cluster.x-k8s.io/cluster-name", CLUSTER);
      Estate.create(client, CapiObjects.object(CapiObjects.KUBEADM_CONFIG, NAMESPACE, node.machine(), labels, config));
      GenericKubernetesResource infra = CapiObjects.object(CapiObjects.METAL3_MACHINE, NAMESPACE, node.machine(), labels,
          Map.of("image", Map.of("url", "http://images.local/ubuntu-2404-k8s-" + spec.fromVersion() + ".qcow2")));
      infra.getMetadata().setAnnotations(infraAnnotations);
      Estate.create(client, infra);
      if (node.role() == NodeRole.CONTROL_PLANE) {
        client.genericKubernetesResources(CapiObjects.MACHINE).inNamespace(NAMESPACE).withName(node.machine())
            .edit(m -> {
              m.getMetadata().setAnnotations(Map.of(
                  "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration",
                  "{\"etcd\":{\"local\":{\"imageTag\":\"3.5.12-0\"}},\"imageRepository\":\"registry.k8s.io\"}"));
              return m;
            });
      }
    }
  }

  /** A ClusterConfiguration: the new one carries an audit flag the old one lacks. */
  private static Map<String, Object> clusterConfiguration(String etcdTag, boolean audit) {
    Map<String, Object> configuration = new LinkedHashMap<>();
    if (audit) {
      configuration.put("apiServer", Map.of("extraArgs", List.of(Map.of("name", "audit-log-maxage", "value", "30"))));
    }
    configuration.put("etcd", Map.of("local", Map.of("imageTag", etcdTag)));
    configuration.put("imageRepository", "registry.k8s.io");
    return configuration;
  }

  private static Map<String, Object> nodeRegistration() {
    return Map.of("nodeRegistration", Map.of("kubeletExtraArgs",
        List.of(Map.of("name", "node-labels", "value", "metal3.io/uuid={{ ds.meta_data.uuid }}"))));
  }
}
