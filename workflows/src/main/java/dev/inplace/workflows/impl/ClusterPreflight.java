package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * The cluster-level rules of DESIGN s.6 that parent runs apply before any change, as pure functions
 * of what they observed (the node-level rules are {@link NodePreflight}).
 */
final class ClusterPreflight {
  /** How many names a message lists before it says "and N more". */
  private static final int LISTED = 10;

  private ClusterPreflight() {}

  /**
   * Why {@code target} cannot be installed on these machines, if it cannot: a downgrade, or a jump
   * of more than one minor version. A machine already at the target is fine; one whose version is
   * unknown is left to its NodeUpgrade's own preflight.
   */
  static Optional<String> versionSkew(List<MachineInfo> machines, String target) {
    KubeVersion wanted = KubeVersion.parse(target);
    List<String> problems = new ArrayList<>();
    for (MachineInfo m : machines) {
      Optional<KubeVersion> current = currentVersion(m);
      if (current.isEmpty() || current.get().compareTo(wanted) == 0) {
        continue;
      }
      KubeVersion now = current.get();
      if (wanted.compareTo(now) < 0) {
        problems.add(m.nodeName() + " runs " + now + " (a downgrade)");
      } else if (now.minorsTo(wanted) > 1) {
        problems.add(m.nodeName() + " runs " + now + " (" + now.minorsTo(wanted) + " minors behind)");
      }
    }
    if (problems.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        "unsupported version skew for " + wanted + ": " + list(problems)
            + "; downgrades are refused and versions go up one minor at a time");
  }

  /** The version a machine runs: what its kubelet reports, else its Machine's spec.version. */
  static Optional<KubeVersion> currentVersion(MachineInfo m) {
    for (String text : new String[] {m.kubeletVersion(), m.version()}) {
      if (text != null && KubeVersion.isValid(text)) {
        return Optional.of(KubeVersion.parse(text));
      }
    }
    return Optional.empty();
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
    if (items.size() <= LISTED) {
      return String.join(", ", items);
    }
    return String.join(", ", items.subList(0, LISTED)) + " and " + (items.size() - LISTED) + " more";
  }
}
