package dev.inplace.sandbox.extension;

import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What the bootstrap and infrastructure providers would have created and the estate does not hold:
 * each Machine's bootstrap config and Metal3Machine, and each pool's templates.
 */
final class ProviderObjects {
  private final CapiObjects objects;

  ProviderObjects(CapiObjects objects) {
    this.objects = objects;
  }

  void seed(List<String> machines, List<String> pools, String version) {
    for (String name : machines) {
      GenericKubernetesResource machine = objects.get(CapiResources.MACHINE, name);
      boolean controlPlane = CapiObjects.labels(machine).containsKey(CapiResources.CONTROL_PLANE_LABEL);
      objects.create(objects.bootstrapConfig, name, bootstrapSpec(version, controlPlane, name));
      objects.create(CapiObjects.METAL3_MACHINE, name, Map.of("image", Map.of("url", "http://images.local/edge-os-24.04.qcow2",
          "checksum", "sha256:5e1f"), "hostSelector", Map.of("matchLabels", Map.of("node", name))));
    }
    for (String pool : pools) {
      objects.create(objects.bootstrapTemplate, pool, Map.of("template", Map.of("spec", bootstrapSpec(null, false, null))));
      objects.create(CapiObjects.METAL3_MACHINE_TEMPLATE, pool, Map.of("template", Map.of("spec",
          Map.of("image", Map.of("url", "http://images.local/edge-os-24.04.qcow2", "checksum", "sha256:5e1f")))));
    }
  }

  private Map<String, Object> bootstrapSpec(String version, boolean controlPlane, String node) {
    Map<String, Object> spec = new LinkedHashMap<>();
    if (objects.kubeadm) {
      Map<String, Object> cluster = new LinkedHashMap<>(Map.of("apiServer", Map.of("certSANs", List.of("edge.example"))));
      if (version != null && controlPlane) {
        cluster.put("kubernetesVersion", version);
      }
      spec.put("clusterConfiguration", cluster);
      spec.put("joinConfiguration", Map.of("nodeRegistration", Map.of("name", node == null ? "{{ ds.meta_data.local_hostname }}" : node)));
    } else {
      if (version != null && controlPlane) {
        spec.put("version", version); // KThreesControlPlane stamps its version on the configs it creates
      }
      spec.put("agentConfig", Map.of("airGapped", true));
      spec.put("files", List.of(Map.of("path", "/etc/motd", "content", "edge")));
    }
    return spec;
  }
}
