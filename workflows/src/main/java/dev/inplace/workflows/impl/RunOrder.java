package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaxUnavailable;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import java.util.List;
import java.util.Map;

/**
 * The order in which the parent runs take nodes, as pure functions of the inventory: the runs and
 * the plan ({@link UpgradePlanner}) both call these, so a plan cannot drift from what a run does.
 * A run starts its nodes in inventory order (Machines sorted by name, control planes first),
 * skipping those already at the target.
 */
public final class RunOrder {
  private RunOrder() {}

  /** The control-plane Machines in the order ControlPlaneUpgrade starts them, one at a time. */
  public static List<MachineInfo> controlPlanes(ClusterInventory inventory) {
    return inventory.machines().stream().filter(m -> m.role() == NodeRole.CONTROL_PLANE).toList();
  }

  /** One MachineDeployment's workers in the order its WorkersUpgrade starts them. */
  public static List<MachineInfo> pool(ClusterInventory inventory, String machineDeployment) {
    return inventory.machines().stream()
        .filter(m -> m.role() == NodeRole.WORKER && machineDeployment.equals(m.pool()))
        .toList();
  }

  /** The MachineDeployments of the cluster, in inventory order. */
  public static List<String> pools(ClusterInventory inventory) {
    return inventory.pools().stream().map(ClusterInventory.PoolInfo::machineDeployment).toList();
  }

  /**
   * How many nodes of a pool of {@code poolSize} a WorkersUpgrade upgrades at once; throws
   * IllegalArgumentException for a value the run would refuse.
   */
  public static int window(String maxUnavailable, int poolSize) {
    return MaxUnavailable.parse(maxUnavailable == null ? "1" : maxUnavailable).windowFor(poolSize);
  }

  /** Nothing to do for this Machine: its kubelet runs the target and its Machine says so. */
  public static boolean atTarget(MachineInfo m, String kubeletVersion, String target) {
    return ClusterPreflight.atTarget(m, kubeletVersion, target);
  }

  /** As above, with the run's version rule ({@link ClusterPreflight#versionMatch}). */
  static boolean atTarget(MachineInfo m, String kubeletVersion, String target, VersionMatch match) {
    return ClusterPreflight.atTarget(m, kubeletVersion, target, match);
  }

  /**
   * Whether ControlPlaneUpgrade takes its etcd snapshot: unless every control plane's kubelet
   * (as observed, by node name) runs the target already. It is taken on the first control plane.
   */
  public static boolean takesEtcdSnapshot(List<MachineInfo> controlPlanes, Map<String, String> kubelets, String target) {
    return takesEtcdSnapshot(controlPlanes, kubelets, target, VersionMatch.EXACT);
  }

  /**
   * As above, with the run's version rule. With {@link VersionMatch#AS_REPORTED} the snapshot is
   * skipped only when every control plane is done ({@link #atTarget}): a k0s kubelet reports {@code
   * +k0s} for {@code +k0s.0} and {@code +k0s.1} alike, so the kubelets alone cannot say nothing will
   * change.
   */
  static boolean takesEtcdSnapshot(
      List<MachineInfo> controlPlanes, Map<String, String> kubelets, String target, VersionMatch match) {
    if (match == VersionMatch.EXACT) {
      return !controlPlanes.stream().allMatch(m -> target.equals(kubelets.get(m.nodeName())));
    }
    return !controlPlanes.stream().allMatch(m -> atTarget(m, kubelets.get(m.nodeName()), target, match));
  }

  /** {@code inplace-pre-v1-31-2-k3s1}, the etcd snapshot's name. */
  public static String snapshotName(String target) {
    return ClusterPreflight.snapshotName(target);
  }
}
