package dev.inplace.workflows.api;

/**
 * How an activity reaches one host: the address plus references to the SSH Secrets in {@code
 * secretNamespace}. Contains no secret material. It is what a run asks for, not authority: the host
 * activities confirm it against the management cluster (the Machine, its Cluster, the Secrets and
 * layout the cluster's resources configure) before they read a Secret or connect (issue 34, H4).
 *
 * @param clusterName the CAPI Cluster the host belongs to (in {@code secretNamespace}); null in
 *     activity inputs recorded before the field existed
 * @param machineName the Machine whose host this is; null in activity inputs recorded before the
 *     field existed (the Machine is then found by its Node's name)
 */
public record HostAccess(
    String secretNamespace, String nodeName, String address, SshSettings ssh, String clusterName, String machineName) {

  /** Without the Machine's name (tools, inputs from before the field): it is found by the Node's. */
  public HostAccess(String secretNamespace, String nodeName, String address, SshSettings ssh, String clusterName) {
    this(secretNamespace, nodeName, address, ssh, clusterName, null);
  }

  /** Without the cluster's name (tests, tools): logs then name the namespace only. */
  public HostAccess(String secretNamespace, String nodeName, String address, SshSettings ssh) {
    this(secretNamespace, nodeName, address, ssh, null, null);
  }

  /** {@code namespace/cluster} when the cluster is known, else the namespace: the {@code cluster} log field. */
  public String clusterForLogs() {
    return clusterName == null || clusterName.isBlank() ? secretNamespace : secretNamespace + "/" + clusterName;
  }
}
