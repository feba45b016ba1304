package dev.inplace.sandbox.estate;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;

/** The CAPI v1beta2 objects of a k3s cluster, as a management cluster holds them. */
final class CapiObjects {
  static final String CAPI_GROUP = "cluster.x-k8s.io";
  static final String CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io";
  static final String VERSION = "v1beta2";

  static final ResourceDefinitionContext CLUSTER = context(CAPI_GROUP, "Cluster", "clusters");
  static final ResourceDefinitionContext MACHINE = context(CAPI_GROUP, "Machine", "machines");
  static final ResourceDefinitionContext MACHINE_SET = context(CAPI_GROUP, "MachineSet", "machinesets");
  static final ResourceDefinitionContext MACHINE_DEPLOYMENT =
      context(CAPI_GROUP, "MachineDeployment", "machinedeployments");
  static final ResourceDefinitionContext KTHREES_CONTROL_PLANE =
      context(CONTROL_PLANE_GROUP, "KThreesControlPlane", "kthreescontrolplanes");
  static final List<ResourceDefinitionContext> ALL =
      List.of(CLUSTER, MACHINE, MACHINE_SET, MACHINE_DEPLOYMENT, KTHREES_CONTROL_PLANE);

  private CapiObjects() {}

  private static ResourceDefinitionContext context(String group, String kind, String plural) {
    return new ResourceDefinitionContext.Builder()
        .withGroup(group)
        .withVersion(VERSION)
        .withKind(kind)
        .withPlural(plural)
        .withNamespaced(true)
        .build();
  }

  static GenericKubernetesResource object(
      ResourceDefinitionContext type, String namespace, String name, Map<String, String> labels, Map<String, Object> spec) {
    GenericKubernetesResource resource =
        new GenericKubernetesResourceBuilder()
            .withApiVersion(type.getGroup() + "/" + type.getVersion())
            .withKind(type.getKind())
            .withNewMetadata()
            .withNamespace(namespace)
            .withName(name)
            .withLabels(labels)
            .endMetadata()
            .build();
    resource.setAdditionalProperty("spec", spec);
    return resource;
  }

  static Map<String, Object> ref(String group, String kind, String name) {
    return Map.of("apiGroup", group, "kind", kind, "name", name);
  }
}
