package dev.inplace.workflows.api;

import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.util.List;

/**
 * Plans an upgrade without changing anything: reads the cluster, its Nodes and PodDisruptionBudgets
 * and (unless asked not to) inspects each host to upgrade over SSH with the read-only inspect
 * script, then returns the waves, each node's steps with their rendered scripts, and the preflight
 * findings. It calls read-only activities only. ID: {@link WorkflowIds#plan}.
 */
@WorkflowInterface
public interface PlanWorkflow {

  @WorkflowMethod
  UpgradePlan plan(PlanRequest request);

  /** What a plan covers: the whole cluster (control plane, then workers), or one of the two. */
  enum PlanScope {
    CLUSTER,
    CONTROL_PLANE,
    WORKERS;

    public boolean controlPlane() {
      return this != WORKERS;
    }

    public boolean workers() {
      return this != CONTROL_PLANE;
    }
  }

  /**
   * @param machineDeployments the pools to plan; empty means every MachineDeployment of the cluster
   * @param maxUnavailable the workers' window, a count or a percent (null: 1)
   * @param window the maintenance window, or null
   * @param inspectHosts whether to read each host to upgrade over SSH (read-only); false skips it
   */
  record PlanRequest(
      ClusterRef cluster,
      NodeUpgradeTemplate template,
      PlanScope scope,
      List<String> machineDeployments,
      String maxUnavailable,
      MaintenanceWindow window,
      boolean inspectHosts) {
    public PlanRequest {
      scope = scope == null ? PlanScope.CLUSTER : scope;
      machineDeployments = machineDeployments == null ? List.of() : List.copyOf(machineDeployments);
    }
  }
}
