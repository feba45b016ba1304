package dev.inplace.workflows.api;

import java.util.List;

/**
 * A CAPI cluster as observed at the start of a run.
 *
 * @param controlPlane the control-plane object (KThreesControlPlane or KubeadmControlPlane)
 * @param controlPlaneVersion its {@code spec.version}
 * @param machines every Machine of the cluster, control planes first, each sorted by name
 * @param pools the cluster's MachineDeployments
 */
public record ClusterInventory(
    ClusterRef cluster,
    ObjectRef controlPlane,
    String controlPlaneVersion,
    List<MachineInfo> machines,
    List<PoolInfo> pools) {

  /** A MachineDeployment with its newest MachineSet. */
  public record PoolInfo(String machineDeployment, String machineSet, String templateVersion, int replicas) {}
}
