package dev.inplace.workflows.api;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;
import java.util.List;

/**
 * Renders a plan's steps and host scripts with the same templates and renderer the host activities
 * run, for the template's distribution and host layout. Pure: connects to nothing.
 */
@ActivityInterface
public interface PlanActivities {

  @ActivityMethod
  RenderedSteps renderSteps(RenderStepsRequest request);

  /**
   * A node's place in the run, as {@code UpgradePlanner.slots} orders it.
   *
   * @param firstControlPlane whether this node upgrades the cluster's control plane (kubeadm apply)
   * @param snapshotName the etcd snapshot taken before this node (on {@code snapshotNode}), or null
   */
  record PlanSlot(
      int order,
      int wave,
      String group,
      MachineInfo machine,
      boolean upgrade,
      boolean firstControlPlane,
      String snapshotName,
      String snapshotNode) {}

  record RenderStepsRequest(NodeUpgradeTemplate template, List<PlanSlot> slots) {}

  /** @param steps one entry per slot, in the slots' order (empty for a node at the target) */
  record RenderedSteps(List<List<UpgradePlan.Step>> steps, List<UpgradePlan.Script> scripts) {}
}
