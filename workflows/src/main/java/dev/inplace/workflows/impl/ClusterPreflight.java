package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.VersionSkew;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import io.temporal.workflow.Workflow;
import java.util.List;
import java.util.Optional;

/**
 * The cluster-level rules of DESIGN s.6 that parent runs apply before any change, as pure functions
 * of what they observed (the node-level rules are {@link NodePreflight}).
 */
final class ClusterPreflight {
  /**
   * Change ID: parent runs from this version on compare versions as the Node reports them ({@link
   * KubeVersion#nodeRuns}, {@link KubeVersion#machineAt}): a k0s Node reports {@code vX.Y.Z+k0s}
   * for every release {@code vX.Y.Z+k0s.N}. Older runs compared strings exactly, so a WorkersUpgrade
   * to {@code +k0s.N} with N >= 1 was refused as if the control plane were behind, and a k0s node at
   * the target was never skipped by the parent.
   */
  static final String K0S_NODE_VERSION_CHANGE = "parent-k0s-node-version";

  private ClusterPreflight() {}

  /** Why {@code target} cannot be installed on these machines, if it cannot ({@link VersionSkew}). */
  static Optional<String> versionSkew(List<MachineInfo> machines, String target) {
    return VersionSkew.problem(machines, target);
  }

  /**
   * Why workers cannot start yet, if so: a control plane not at {@code target} (a kubelet must never
   * be newer than the apiserver). WorkersUpgrade refuses with it; the plan reports it.
   */
  static Optional<String> controlPlaneBehind(List<MachineInfo> controlPlanes, String target) {
    return controlPlaneBehind(controlPlanes, target, VersionMatch.EXACT);
  }

  /**
   * As above. {@link VersionMatch#EXACT} (runs before {@link #K0S_NODE_VERSION_CHANGE}) orders the
   * versions, so a k0s Node's {@code +k0s} is behind a {@code +k0s.1} target; {@link
   * VersionMatch#AS_REPORTED} asks whether the Node runs the target ({@link VersionSkew#runs}), as
   * the control-plane health gate and the custom resources' intake do.
   */
  static Optional<String> controlPlaneBehind(List<MachineInfo> controlPlanes, String target, VersionMatch match) {
    KubeVersion wanted = KubeVersion.parse(target);
    List<String> behind = new java.util.ArrayList<>();
    for (MachineInfo m : controlPlanes) {
      Optional<KubeVersion> now = currentVersion(m);
      boolean atTarget = match == VersionMatch.EXACT
          ? now.isPresent() && now.get().compareTo(wanted) == 0
          : VersionSkew.runs(m, target);
      if (now.isPresent() && !atTarget) {
        behind.add(m.nodeName() + " runs " + now.get());
      }
    }
    if (behind.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of("control plane not at " + target + ": " + list(behind) + "; upgrade the control plane first");
  }

  /** The version a machine runs: what its kubelet reports, else its Machine's spec.version. */
  static Optional<KubeVersion> currentVersion(MachineInfo m) {
    return VersionSkew.currentVersion(m);
  }

  /** Whether a machine already runs {@code target} and its Machine says so: nothing to do. */
  static boolean atTarget(MachineInfo m, String kubeletVersion, String target) {
    return atTarget(m, kubeletVersion, target, VersionMatch.EXACT);
  }

  /** As above, with the rule {@code match} (exact strings, or as a k0s Node reports its version). */
  static boolean atTarget(MachineInfo m, String kubeletVersion, String target, VersionMatch match) {
    return match.machineAt(m, kubeletVersion, target);
  }

  /**
   * The one version rule of this parent run, decided once at its start: {@link
   * VersionMatch#AS_REPORTED} from {@link #K0S_NODE_VERSION_CHANGE} on, {@link VersionMatch#EXACT}
   * for runs recorded before it. A workflow call: only from a parent workflow's thread.
   */
  static VersionMatch versionMatch() {
    return Workflow.getVersion(K0S_NODE_VERSION_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
        ? VersionMatch.AS_REPORTED
        : VersionMatch.EXACT;
  }

  /** {@code inplace-pre-v1-31-2-k3s1}: every character outside [a-z0-9-] becomes '-'. */
  static String snapshotName(String target) {
    return "inplace-pre-" + target.replaceAll("[^a-z0-9-]", "-");
  }

  /** The warning for budgets that allow no disruption now, or empty when there are none. */
  static Optional<String> budgetWarning(List<BlockingBudget> blocking) {
    if (blocking == null || blocking.isEmpty()) {
      return Optional.empty();
    }
    List<String> names =
        blocking.stream()
            .map(b -> b.namespace() + "/" + b.name() + " (" + b.disruptionsAllowed() + " disruptions allowed, "
                + b.expectedPods() + " pods)")
            .toList();
    return Optional.of("PodDisruptionBudgets allowing no disruption now, drains will wait on them: " + list(names));
  }

  static String list(List<String> items) {
    return VersionSkew.list(items);
  }
}
