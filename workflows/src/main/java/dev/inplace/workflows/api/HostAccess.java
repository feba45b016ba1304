package dev.inplace.workflows.api;

/**
 * How an activity reaches one host: the address plus references to the SSH Secrets in {@code
 * secretNamespace}. Contains no secret material.
 *
 * @param clusterName the CAPI Cluster the host belongs to (in {@code secretNamespace}), for logs;
 *     null in activity inputs recorded before the field existed
 */
public record HostAccess(String secretNamespace, String nodeName, String address, SshSettings ssh, String clusterName) {

  /** Without the cluster's name (tests, tools): logs then name the namespace only. */
  public HostAccess(String secretNamespace, String nodeName, String address, SshSettings ssh) {
    this(secretNamespace, nodeName, address, ssh, null);
  }

  /** {@code namespace/cluster} when the cluster is known, else the namespace: the {@code cluster} log field. */
  public String clusterForLogs() {
    return clusterName == null || clusterName.isBlank() ? secretNamespace : secretNamespace + "/" + clusterName;
  }
}
