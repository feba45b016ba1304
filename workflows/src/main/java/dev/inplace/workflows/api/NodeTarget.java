package dev.inplace.workflows.api;

/**
 * The Machine and Node one NodeUpgrade works on, with the address its host is reached at. Resolved
 * from the Machine when the run starts and frozen.
 */
public record NodeTarget(
    ClusterRef cluster, String machineName, String nodeName, NodeRole role, String address) {
  public NodeTarget {
    if (cluster == null) {
      throw new IllegalArgumentException("cluster is required");
    }
    Requests.requireName("machine name", machineName);
    Requests.requireName("node name", nodeName);
    if (role == null) {
      throw new IllegalArgumentException("node role is required");
    }
    Requests.requireText("host address", address);
    if (!address.matches("[A-Za-z0-9.:-]+")) {
      throw new IllegalArgumentException("host address has unexpected characters: " + address);
    }
  }
}
