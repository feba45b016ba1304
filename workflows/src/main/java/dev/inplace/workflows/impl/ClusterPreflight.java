package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.VersionSkew;
import java.util.List;
import java.util.Optional;

/**
 * The cluster-level rules of DESIGN s.6 that parent runs apply before any change, as pure functions
 * of what they observed (the node-level rules are {@link NodePreflight}).
 */
final class ClusterPreflight {
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
    KubeVersion wanted = KubeVersion.parse(target);
    List<String> behind = new java.util.ArrayList<>();
    for (MachineInfo m : controlPlanes) {
      Optional<KubeVersion> now = currentVersion(m);
      if (now.isPresent() && now.get().compareTo(wanted) != 0) {
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
    return target.equals(kubeletVersion) && target.equals(m.version());
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
