package dev.inplace.activities.capi;

import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;

/**
 * Coordinates of the CAPI objects inplace reads and patches, for fabric8 generic resources. CAPI
 * core types are served at v1beta2 since CAPI v1.11 (reference/capi-contracts.md s.3);
 * KThreesControlPlane's own v1beta2 is its storage version.
 */
public final class CapiResources {
  public static final String CORE_GROUP = "cluster.x-k8s.io";
  public static final String CONTROL_PLANE_GROUP = "controlplane.cluster.x-k8s.io";
  public static final String BOOTSTRAP_GROUP = "bootstrap.cluster.x-k8s.io";
  public static final String VERSION = "v1beta2";

  /** On every object of a cluster (Machines, MachineSets, MachineDeployments, Secrets). */
  public static final String CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name";

  /** Present (value {@code ""}) on control-plane Machines. */
  public static final String CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane";

  /** On MachineSets and Machines of a MachineDeployment: its name. */
  public static final String DEPLOYMENT_NAME_LABEL = "cluster.x-k8s.io/deployment-name";

  /** Kept by the MachineDeployment controller on each MachineSet; the newest has the highest. */
  public static final String REVISION_ANNOTATION = "machinedeployment.clusters.x-k8s.io/revision";

  public static final ResourceDefinitionContext MACHINE =
      namespaced(CORE_GROUP, "Machine", "machines");
  public static final ResourceDefinitionContext MACHINE_SET =
      namespaced(CORE_GROUP, "MachineSet", "machinesets");
  public static final ResourceDefinitionContext MACHINE_DEPLOYMENT =
      namespaced(CORE_GROUP, "MachineDeployment", "machinedeployments");
  public static final ResourceDefinitionContext CLUSTER =
      namespaced(CORE_GROUP, "Cluster", "clusters");
  /** Read by nothing in the product (a ClusterClass cluster is refused); the sandbox seeds one. */
  public static final ResourceDefinitionContext CLUSTER_CLASS =
      namespaced(CORE_GROUP, "ClusterClass", "clusterclasses");
  public static final ResourceDefinitionContext KTHREES_CONTROL_PLANE =
      namespaced(CONTROL_PLANE_GROUP, "KThreesControlPlane", "kthreescontrolplanes");
  public static final ResourceDefinitionContext KUBEADM_CONTROL_PLANE =
      namespaced(CONTROL_PLANE_GROUP, "KubeadmControlPlane", "kubeadmcontrolplanes");

  /** k0smotron's control plane (its v1beta2 is the storage version; spec.version, docs/k0s.md). */
  public static final ResourceDefinitionContext K0S_CONTROL_PLANE =
      namespaced(CONTROL_PLANE_GROUP, "K0sControlPlane", "k0scontrolplanes");

  /**
   * k0smotron's worker bootstrap template: a {@code spec.template.spec.version} set there wins over
   * the Machine's version when a new worker bootstraps (docs/k0s.md).
   */
  public static final ResourceDefinitionContext K0S_WORKER_CONFIG_TEMPLATE =
      namespaced(BOOTSTRAP_GROUP, "K0sWorkerConfigTemplate", "k0sworkerconfigtemplates");

  public static final ResourceDefinitionContext KUBEADM_CONFIG =
      namespaced(BOOTSTRAP_GROUP, "KubeadmConfig", "kubeadmconfigs");
  public static final ResourceDefinitionContext KUBEADM_CONFIG_TEMPLATE =
      namespaced(BOOTSTRAP_GROUP, "KubeadmConfigTemplate", "kubeadmconfigtemplates");

  /** On control-plane Machines: the name of their control-plane object. */
  public static final String CONTROL_PLANE_NAME_LABEL = "cluster.x-k8s.io/control-plane-name";

  /** The control-plane kinds whose {@code spec.version} inplace reads and records. */
  public static final List<ResourceDefinitionContext> CONTROL_PLANES =
      List.of(KTHREES_CONTROL_PLANE, KUBEADM_CONTROL_PLANE, K0S_CONTROL_PLANE);

  private CapiResources() {}

  /**
   * The coordinates of a control-plane object named by a Cluster's {@code spec.controlPlaneRef}.
   *
   * @throws io.temporal.failure.ApplicationFailure {@code InvalidRequest} for any other group or
   *     kind
   */
  public static ResourceDefinitionContext controlPlane(ObjectRef ref) {
    if (ref == null) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.INVALID_REQUEST, "no control-plane object given");
    }
    for (ResourceDefinitionContext type : CONTROL_PLANES) {
      if (type.getGroup().equals(ref.apiGroup()) && type.getKind().equals(ref.kind())) {
        return type;
      }
    }
    throw UpgradeFailures.nonRetryable(
        UpgradeFailures.INVALID_REQUEST,
        "control plane "
            + ref.apiGroup()
            + "/"
            + ref.kind()
            + " "
            + ref.name()
            + " is not supported (only "
            + CONTROL_PLANES.stream().map(ResourceDefinitionContext::getKind).toList()
            + " of "
            + CONTROL_PLANE_GROUP
            + ")");
  }

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
