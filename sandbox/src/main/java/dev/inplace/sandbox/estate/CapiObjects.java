package dev.inplace.sandbox.estate;

import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;

/** Builds the CAPI v1beta2 objects of a k3s, kubeadm or k0s cluster, as a management cluster holds them. */
final class CapiObjects {
  static final String CAPI_GROUP = CapiResources.CORE_GROUP;
  static final String CONTROL_PLANE_GROUP = CapiResources.CONTROL_PLANE_GROUP;
  static final ResourceDefinitionContext CLUSTER = CapiResources.CLUSTER;
  static final ResourceDefinitionContext CLUSTER_CLASS = CapiResources.CLUSTER_CLASS;
  static final ResourceDefinitionContext MACHINE = CapiResources.MACHINE;
  static final ResourceDefinitionContext MACHINE_SET = CapiResources.MACHINE_SET;
  static final ResourceDefinitionContext MACHINE_DEPLOYMENT = CapiResources.MACHINE_DEPLOYMENT;
  static final ResourceDefinitionContext KTHREES_CONTROL_PLANE = CapiResources.KTHREES_CONTROL_PLANE;
  static final ResourceDefinitionContext KUBEADM_CONTROL_PLANE = CapiResources.KUBEADM_CONTROL_PLANE;
  static final ResourceDefinitionContext KUBEADM_CONFIG = CapiResources.KUBEADM_CONFIG;
  static final ResourceDefinitionContext KUBEADM_CONFIG_TEMPLATE = CapiResources.KUBEADM_CONFIG_TEMPLATE;
  static final ResourceDefinitionContext K0S_CONTROL_PLANE = CapiResources.K0S_CONTROL_PLANE;
  static final ResourceDefinitionContext K0S_WORKER_CONFIG_TEMPLATE = CapiResources.K0S_WORKER_CONFIG_TEMPLATE;
  static final String INFRASTRUCTURE_GROUP = "infrastructure.cluster.x-k8s.io";
  /** The InfraMachine of the sandbox's Machines (metal3 serves v1beta1). */
  static final ResourceDefinitionContext METAL3_MACHINE =
      new ResourceDefinitionContext.Builder()
          .withGroup(INFRASTRUCTURE_GROUP)
          .withVersion("v1beta1")
          .withKind("Metal3Machine")
          .withPlural("metal3machines")
          .withNamespaced(true)
          .build();
  static final List<ResourceDefinitionContext> ALL =
      List.of(CLUSTER, CLUSTER_CLASS, MACHINE, MACHINE_SET, MACHINE_DEPLOYMENT, KTHREES_CONTROL_PLANE, KUBEADM_CONTROL_PLANE,
          KUBEADM_CONFIG, KUBEADM_CONFIG_TEMPLATE, K0S_CONTROL_PLANE, K0S_WORKER_CONFIG_TEMPLATE, METAL3_MACHINE);

  private CapiObjects() {}

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
