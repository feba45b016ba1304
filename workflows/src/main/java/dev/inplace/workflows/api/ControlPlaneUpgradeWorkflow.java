package dev.inplace.workflows.api;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.util.List;

/**
 * Upgrades a cluster's control-plane nodes strictly one at a time, after a cluster preflight and an
 * etcd snapshot on the first control-plane node; before each next node every control plane must be
 * Ready at its expected version, the apiserver healthy and (k3s) every server an etcd voter. At the
 * end records the version on the control-plane object. ID: {@link WorkflowIds#controlPlaneUpgrade}.
 */
@WorkflowInterface
public interface ControlPlaneUpgradeWorkflow extends UpgradeControls, ChildReports {

  @WorkflowMethod
  ControlPlaneUpgradeResult upgrade(ControlPlaneUpgradeRequest request);

  /**
   * @param soakSeconds pause between nodes after one finishes (durable timer)
   * @param window optional maintenance window for starting nodes
   */
  record ControlPlaneUpgradeRequest(
      ClusterRef cluster, NodeUpgradeTemplate template, long soakSeconds, MaintenanceWindow window) {}

  /** @param aborted true when an operator aborted the run */
  record ControlPlaneUpgradeResult(
      ClusterRef cluster,
      String targetVersion,
      String etcdSnapshot,
      int upgraded,
      int failed,
      int skipped,
      boolean aborted,
      List<NodeStatus> nodes,
      boolean controlPlaneLeftPaused,
      String message) {

    /** A result without the end line (runs that ended before it was reported). */
    public ControlPlaneUpgradeResult(
        ClusterRef cluster, String targetVersion, String etcdSnapshot, int upgraded, int failed, int skipped,
        boolean aborted, List<NodeStatus> nodes) {
      this(cluster, targetVersion, etcdSnapshot, upgraded, failed, skipped, aborted, nodes, false, "");
    }
  }
}
