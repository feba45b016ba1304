package dev.inplace.sandbox.chaos;

import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * What an activity in flight is, in issue 10's words: mid-upload, mid-install, mid-restart,
 * mid-drain, mid-verify, or inside the compensation of a failing node; anything else is the
 * preflight (cluster and host reads, artifact checks, the etcd snapshot, the control plane's health
 * gate) or bookkeeping (marks, pauses, records, the uncordon of a node that upgraded). The killer spreads its aimed kills over
 * the named kinds ({@link KillAim}); the summary counts kills by kind.
 */
enum KillKind {
  UPLOAD,
  INSTALL,
  RESTART,
  DRAIN,
  VERIFY,
  COMPENSATION,
  PREFLIGHT,
  BOOKKEEPING;

  /** The kinds issue 10 names, in its order. */
  static final List<KillKind> NAMED = List.of(UPLOAD, INSTALL, RESTART, DRAIN, VERIFY, COMPENSATION);

  private static final Map<String, KillKind> BY_ACTIVITY = Map.ofEntries(
      Map.entry("StageArtifacts", UPLOAD),
      Map.entry("BackupBinaries", INSTALL),
      Map.entry("InstallArtifacts", INSTALL),
      Map.entry("RunUpgradeCommand", INSTALL),
      Map.entry("RestartService", RESTART),
      Map.entry("CordonNode", DRAIN),
      Map.entry("DrainNode", DRAIN),
      Map.entry("AwaitNodeVersion", VERIFY),
      Map.entry("RestoreBinaries", COMPENSATION),
      Map.entry("DescribeCluster", PREFLIGHT),
      Map.entry("InspectHost", PREFLIGHT),
      Map.entry("InspectNode", PREFLIGHT),
      Map.entry("InspectNodes", PREFLIGHT),
      Map.entry("ListBlockingBudgets", PREFLIGHT),
      Map.entry("VerifyArtifacts", PREFLIGHT),
      Map.entry("ControlPlaneVersions", PREFLIGHT),
      Map.entry("SnapshotEtcd", PREFLIGHT),
      // The control plane's health gate, before each control-plane node and before the pools start.
      Map.entry("AwaitControlPlaneHealthy", PREFLIGHT));

  /**
   * The scripts (journal {@code script=} names) each host activity runs; an activity not listed runs
   * none that journal (API calls, the read-only host inspection, SFTP uploads between staging's two
   * scripts).
   */
  private static final Map<String, Set<String>> SCRIPTS = Map.of(
      "StageArtifacts", Set.of("stage-prepare", "stage-commit"),
      "BackupBinaries", Set.of("backup"),
      "InstallArtifacts", Set.of("install"),
      "RunUpgradeCommand", Set.of("upgrade"),
      "RestartService", Set.of("restart", "reboot", "after-reboot"),
      "RestoreBinaries", Set.of("restore"),
      "SnapshotEtcd", Set.of("etcd-snapshot"));

  /** The journal's name for the compensation's own script (the rest of a compensation is told by its run's phase). */
  static final String RESTORE_SCRIPT = "restore";

  /**
   * The kind of an activity attempt.
   *
   * @param compensating whether its run was rolling back (the node run's {@code InplacePhase} was
   *     {@code ROLLING_BACK}): every activity of a rollback is part of the compensation
   */
  static KillKind of(String activity, boolean compensating) {
    return compensating ? COMPENSATION : BY_ACTIVITY.getOrDefault(activity, BOOKKEEPING);
  }

  /** The journal script names {@code activity} runs on a host (empty for API-only activities). */
  static Set<String> scriptsOf(String activity) {
    return SCRIPTS.getOrDefault(activity, Set.of());
  }

  boolean named() {
    return NAMED.contains(this);
  }

  String label() {
    return name().toLowerCase(Locale.ROOT);
  }
}
