package dev.inplace.worker.extension;

import dev.inplace.workflows.api.KubeVersion;
import java.util.ArrayList;
import java.util.List;

/**
 * The upgrade plan inplace gives Cluster API's topology controller for a ClusterClass cluster
 * (GenerateUpgradePlan): the control plane and the workers both step through every minor version
 * between where they are and the target, each intermediate step the latest version of its minor the
 * ClusterClass lists in {@code spec.kubernetesVersions}, the last step the target.
 *
 * <p>Why workers too: left to itself, CAPI v1.13 moves workers in as few steps as the version skew
 * allows (a minor every three), but inplace upgrades a machine one minor at a time (its
 * CanUpdateMachineSet declines a skipped minor, and a declined in-place update is a rollout that
 * replaces the machines). The plan depends on its inputs alone: CAPI caches it.
 */
final class UpgradePlanner {
  /** Each list is the versions to apply in order; empty when that part is already at the target. */
  record Plan(List<String> controlPlane, List<String> workers) {}

  /** A version as parsed and as written (CAPI matches the workers' steps to the control plane's by text). */
  private record Listed(KubeVersion version, String text) {}

  private UpgradePlanner() {}

  /**
   * The plan from the control plane's and the workers' versions ({@code fromWorkers} empty when the
   * cluster has no workers) to {@code to}, through {@code classVersions}.
   *
   * @throws IllegalArgumentException naming what is wrong and the fix: an unparseable version, a
   *     downgrade, a minor the class lists no version of
   */
  static Plan plan(String fromControlPlane, String fromWorkers, String to, List<String> classVersions, String className) {
    KubeVersion cp = parse("fromControlPlaneKubernetesVersion", fromControlPlane);
    KubeVersion target = parse("toKubernetesVersion", to);
    if (target.compareTo(cp) < 0 || target.major() != cp.major()) {
      throw new IllegalArgumentException("cannot plan " + fromControlPlane + " -> " + to
          + ": inplace upgrades within one major version and never downgrades");
    }
    List<Listed> listed = new ArrayList<>();
    for (String v : classVersions) {
      listed.add(new Listed(parse("ClusterClass " + className + " spec.kubernetesVersions", v), v));
    }
    List<String> controlPlane = new ArrayList<>();
    if (target.compareTo(cp) > 0) {
      for (int minor = cp.minor() + 1; minor < target.minor(); minor++) {
        controlPlane.add(latestOf(listed, target.major(), minor, fromControlPlane, to, className));
      }
      controlPlane.add(to);
    }
    List<String> workers = new ArrayList<>();
    if (fromWorkers != null && !fromWorkers.isBlank()) {
      KubeVersion w = parse("fromWorkersKubernetesVersion", fromWorkers);
      if (w.compareTo(target) > 0 || w.major() != target.major()) {
        throw new IllegalArgumentException("cannot plan workers " + fromWorkers + " -> " + to
            + ": inplace upgrades within one major version and never downgrades");
      }
      // The versions CAPI lets workers take: the control plane's current one and each step of its plan.
      List<Listed> candidates = new ArrayList<>();
      candidates.add(new Listed(cp, fromControlPlane));
      controlPlane.forEach(v -> candidates.add(new Listed(KubeVersion.parse(v), v)));
      for (int minor = w.minor() + 1; minor < target.minor(); minor++) {
        workers.add(latestOf(candidates, target.major(), minor, fromWorkers, to, className));
      }
      if (w.compareTo(target) < 0) {
        workers.add(to);
      }
    }
    return new Plan(List.copyOf(controlPlane), List.copyOf(workers));
  }

  private static String latestOf(List<Listed> versions, int major, int minor, String from, String to, String className) {
    return versions.stream().filter(l -> l.version().major() == major && l.version().minor() == minor)
        .max((a, b) -> a.version().compareTo(b.version())).map(Listed::text)
        .orElseThrow(() -> new IllegalArgumentException("cannot plan " + from + " -> " + to + ": inplace upgrades one minor"
            + " version at a time and ClusterClass " + className + " lists no v" + major + "." + minor
            + " version; add one to its spec.kubernetesVersions"));
  }

  private static KubeVersion parse(String field, String text) {
    if (!KubeVersion.isValid(text)) {
      throw new IllegalArgumentException(field + " '" + text + "' is not a Kubernetes version");
    }
    return KubeVersion.parse(text);
  }
}
