package dev.inplace.workflows.api;

import io.temporal.workflow.SignalMethod;
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

  /** The signal's name, as a child sends it to its parent's workflow (whichever run is current). */
  String NODE_ENDED = "nodeEnded";

  /**
   * A child asked to ({@link NodeUpgradeRequest#reportEnd()}) tells how it ended. The run that
   * started the child learns it from the child's completion too and drops the report; a run that
   * took the child over at continue-as-new records the node's outcome from it. A report for a node
   * the run does not follow, or from another run of the node, is ignored.
   */
  @SignalMethod(name = NODE_ENDED)
  void nodeEnded(NodeEnd end);

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
   * the operator's settings, how many runs came before, and (from change {@code
   * workers-hand-over-children} on) the nodes whose children were still upgrading them, with the end
   * reports that came for them before the hand-over; both empty (or null, from older runs) otherwise.
   */
  record WorkersCarriedState(
      List<MachineInfo> machines,
      List<NodeStatus> nodes,
      String maxUnavailable,
      boolean paused,
      boolean aborting,
      int runs,
      List<HandedOverNode> handedOver,
      List<NodeEnd> endReports) {

    public WorkersCarriedState(
        List<MachineInfo> machines, List<NodeStatus> nodes, String maxUnavailable, boolean paused, boolean aborting,
        int runs) {
      this(machines, nodes, maxUnavailable, paused, aborting, runs, List.of(), List.of());
    }
  }

  /** A node whose NodeUpgrade child (that run of it) a run hands over to the next at continue-as-new. */
  record HandedOverNode(String node, String childId, String childRunId) {}

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
