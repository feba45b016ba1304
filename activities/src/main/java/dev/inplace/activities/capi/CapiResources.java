package dev.inplace.activities.capi;

import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * Coordinates of the CAPI objects inplace reads and patches, for fabric8 generic resources. CAPI
 * core types are served at v1beta2 since CAPI v1.11 (reference/capi-contracts.md s.3);
 * KThreesControlPlane's own v1beta2 is its storage version.
 */
public final class CapiResources {
  public static final String CORE_GROUP = "cluster.x-k8s.io";
  public static final String CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io";
  public static final String VERSION = "v1beta2";

  public static final ResourceDefinitionContext MACHINE =
      namespaced(CORE_GROUP, "Machine", "machines");
  public static final ResourceDefinitionContext MACHINE_SET =
      namespaced(CORE_GROUP, "MachineSet", "machinesets");
  public static final ResourceDefinitionContext MACHINE_DEPLOYMENT =
      namespaced(CORE_GROUP, "MachineDeployment", "machinedeployments");
  public static final ResourceDefinitionContext CLUSTER =
      namespaced(CORE_GROUP, "Cluster", "clusters");
  public static final ResourceDefinitionContext KTHREES_CONTROL_PLANE =
      namespaced(CONTROL_PLANE_GROUP, "KThreesControlPlane", "kthreescontrolplanes");
  public static final ResourceDefinitionContext KUBEADM_CONTROL_PLANE =
      namespaced(CONTROL_PLANE_GROUP, "KubeadmControlPlane", "kubeadmcontrolplanes");

  private CapiResources() {}

  private static ResourceDefinitionContext namespaced(String group, String kind, String plural) {
    return new ResourceDefinitionContext.Builder()
        .withGroup(group)
        .withVersion(VERSION)
        .withKind(kind)
        .withPlural(plural)
        .withNamespaced(true)
        .build();
  }
}
