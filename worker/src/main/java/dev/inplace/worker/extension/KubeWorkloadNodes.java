package dev.inplace.worker.extension;

import dev.inplace.activities.kube.KubeClients;
import dev.inplace.workflows.api.ClusterRef;
import io.fabric8.kubernetes.api.model.Node;
import java.util.List;
import java.util.Optional;

/** Reads Nodes through the cluster's {@code <cluster>-kubeconfig} Secret, as the activities do. */
final class KubeWorkloadNodes implements WorkloadNodes {
  private static final String CONTROL_PLANE_ROLE = "node-role.kubernetes.io/control-plane";

  private final KubeClients clients;

  KubeWorkloadNodes(KubeClients clients) {
    this.clients = clients;
  }

  @Override
  public Optional<String> kubeletVersion(ClusterRef cluster, String node) {
    Node n = clients.workload(cluster).nodes().withName(node).get();
    return Optional.ofNullable(n).map(KubeWorkloadNodes::kubelet);
  }

  @Override
  public List<String> otherControlPlaneVersions(ClusterRef cluster, String except) {
    return clients.workload(cluster).nodes().withLabel(CONTROL_PLANE_ROLE).list().getItems().stream()
        .filter(n -> !n.getMetadata().getName().equals(except))
        .map(KubeWorkloadNodes::kubelet)
        .filter(v -> v != null)
        .sorted()
        .toList();
  }

  private static String kubelet(Node n) {
    return n.getStatus() == null || n.getStatus().getNodeInfo() == null ? null : n.getStatus().getNodeInfo().getKubeletVersion();
  }
}
