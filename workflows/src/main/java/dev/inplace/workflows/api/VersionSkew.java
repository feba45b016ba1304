package dev.inplace.workflows.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * DESIGN s.6's cluster-level version rule, as one pure function used by both intakes (CR and hook)
 * and by the parent workflows' preflight: no downgrade and no jump of more than one minor version,
 * judged on what each machine runs (its kubelet, else its Machine's version).
 */
public final class VersionSkew {
  /** How many names a message lists before it says "and N more". */
  private static final int LISTED = 10;

  private VersionSkew() {}

  /**
   * Why {@code target} cannot be installed on these machines, if it cannot. A machine already at
   * the target is fine; one whose version is unknown is left to its NodeUpgrade's own preflight.
   */
  public static Optional<String> problem(List<MachineInfo> machines, String target) {
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
  public static Optional<KubeVersion> currentVersion(MachineInfo m) {
    for (String text : new String[] {m.kubeletVersion(), m.version()}) {
      if (text != null && KubeVersion.isValid(text)) {
        return Optional.of(KubeVersion.parse(text));
      }
    }
    return Optional.empty();
  }

  /**
   * Whether a machine runs {@code target}: what its kubelet reports (else its Machine's version)
   * runs it as {@link KubeVersion#nodeRuns} judges, so a k0s Node reporting {@code v1.31.2+k0s}
   * runs {@code v1.31.2+k0s.1}. The one "control plane at the target" rule of the parents (from
   * parent-k0s-node-version on) and of the custom resources' intake.
   */
  public static boolean runs(MachineInfo m, String target) {
    return currentVersion(m).map(now -> KubeVersion.nodeRuns(now.toString(), target)).orElse(false);
  }

  /** At most {@value #LISTED} items, then "and N more". */
  public static String list(List<String> items) {
    if (items.size() <= LISTED) {
      return String.join(", ", items);
    }
    return String.join(", ", items.subList(0, LISTED)) + " and " + (items.size() - LISTED) + " more";
  }
}
