package dev.inplace.sandbox.hosts;

import dev.inplace.workflows.api.NodeRole;
import java.nio.file.Path;

/**
 * A node as the kubelet simulator sees it.
 *
 * @param name the Kubernetes Node name
 * @param root the node's root directory ({@code INPLACE_HOST_ROOT})
 * @param service the service unit ({@code k3s} or {@code k3s-agent}; {@code kubelet} on kubeadm;
 *     {@code k0scontroller} or {@code k0sworker} on k0s)
 * @param role a control plane (a k3s server with an embedded etcd member) or a worker
 */
public record SimulatedNode(String name, Path root, String service, NodeRole role) {

  /** The kubelet's service on kubeadm nodes; every other service is k3s's. */
  public static final String KUBELET_SERVICE = "kubelet";

  /**
   * The binary, relative to the root, whose {@code --version} the kubelet reports: {@code
   * usr/bin/kubelet} on kubeadm nodes, {@code usr/local/bin/k3s} otherwise (as the fake systemctl).
   */
  public String versionBinary() {
    if (KUBELET_SERVICE.equals(service)) {
      return "usr/bin/kubelet";
    }
    return k0s() ? "usr/local/bin/k0s" : "usr/local/bin/k3s";
  }

  /** Whether the node runs k0s (services k0scontroller, k0sworker). */
  public boolean k0s() {
    return service.startsWith("k0s");
  }

  /**
   * The kubelet version a Node reports for what its version binary prints: the same, except on k0s,
   * whose kubelet reports {@code v1.31.2+k0s} for the release {@code v1.31.2+k0s.0}.
   */
  public String kubeletVersion(String printed) {
    return k0s() ? printed.replaceFirst("\\+k0s\\.\\d+$", "+k0s") : printed;
  }

  /** Whether the Node carries k3s's EtcdIsVoter condition (k3s servers only). */
  public boolean reportsEtcdVoter() {
    return role == NodeRole.CONTROL_PLANE && !KUBELET_SERVICE.equals(service) && !k0s();
  }
}
