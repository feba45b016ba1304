package dev.inplace.workflows.api;

/**
 * A CAPI Cluster in the management cluster. The namespace is also where the cluster's Secrets live
 * ({@code <name>-kubeconfig}, SSH key and known_hosts).
 */
public record ClusterRef(String namespace, String name) {
  public ClusterRef {
    Requests.requireName("cluster namespace", namespace);
    Requests.requireName("cluster name", name);
  }

  @Override
  public String toString() {
    return namespace + "/" + name;
  }
}
