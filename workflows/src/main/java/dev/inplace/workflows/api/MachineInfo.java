package dev.inplace.workflows.api;

/**
 * A Machine of the cluster as observed once at the start of a run.
 *
 * @param pool the MachineDeployment it belongs to, empty for control-plane Machines
 * @param version {@code Machine.spec.version}
 * @param kubeletVersion what its Node reports now (the Machine's mirror if the Node cannot be read),
 *     empty if unknown
 */
public record MachineInfo(
    String name, String nodeName, NodeRole role, String address, String version, String kubeletVersion, String pool) {

  public NodeTarget target(ClusterRef cluster) {
    return new NodeTarget(cluster, name, nodeName, role, address);
  }
}
