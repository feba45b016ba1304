package dev.inplace.workflows.api;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.util.List;

/**
 * Upgrades one MachineDeployment's workers through a sliding window of NodeUpgrade children, sized
 * by maxUnavailable. Starts only when every control-plane node runs the target version. Continues as
 * new before its history grows large, carrying its progress. At the end records the version on the
 * current MachineSet and the MachineDeployment, paused. ID: {@link WorkflowIds#workersUpgrade}.
 */
@WorkflowInterface
public interface WorkersUpgradeWorkflow extends UpgradeControls, ChildReports {

  @WorkflowMethod
  WorkersUpgradeResult upgrade(WorkersUpgradeRequest request);

  /**
   * @param maxUnavailable window size: a count ({@code "2"}) or a percent of the pool ({@code
   *     "25%"}), never less than 1
   * @param onFailure halt (default) or continue up to {@code maxFailures}
   * @param carried progress carried over a continue-as-new; null when an operator starts the run
   */
  record WorkersUpgradeRequest(
      ClusterRef cluster,
      String machineDeployment,
      NodeUpgradeTemplate template,
      String maxUnavailable,
      FailurePolicy onFailure,
      int maxFailures,
      long soakSeconds,
      MaintenanceWindow window,
      WorkersCarriedState carried) {

    public WorkersUpgradeRequest withCarried(WorkersCarriedState state) {
      return new WorkersUpgradeRequest(
          cluster, machineDeployment, template, maxUnavailable, onFailure, maxFailures, soakSeconds, window, state);
    }
  }

  /**
   * What one run hands the next across continue-as-new: the frozen node list, every node's status,
   * the operator's settings, and how many runs came before.
   */
  record WorkersCarriedState(
      List<MachineInfo> machines,
      List<NodeStatus> nodes,
      String maxUnavailable,
      boolean paused,
      boolean aborting,
      int runs) {}

  record WorkersUpgradeResult(
      ClusterRef cluster,
      String machineDeployment,
      String targetVersion,
      int upgraded,
      int failed,
      int skipped,
      boolean aborted,
      int runs,
      List<NodeStatus> nodes) {}
}
