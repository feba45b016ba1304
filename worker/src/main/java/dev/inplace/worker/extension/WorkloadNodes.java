package dev.inplace.worker.extension;

import dev.inplace.workflows.api.ClusterRef;
import java.util.List;
import java.util.Optional;

/** What the workload cluster's Nodes report (the kubeconfig Secret in the worker; a stand-in in tests). */
interface WorkloadNodes {

  /** The kubelet version the Node reports, empty when there is no such Node. */
  Optional<String> kubeletVersion(ClusterRef cluster, String node);

  /** The kubelet versions of the cluster's control-plane Nodes other than {@code except}. */
  List<String> otherControlPlaneVersions(ClusterRef cluster, String except);
}
