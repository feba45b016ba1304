package dev.inplace.worker.watch;

/**
 * Lifecycle reasons of conditions and Events, beside the failure types of UpgradeFailures (which
 * are the reasons of every refusal and failure).
 */
public final class Reasons {
  public static final String PENDING = "Pending";
  public static final String STARTED = "Started";
  public static final String UPGRADING = "Upgrading";
  public static final String WAITING_FOR_CONTROL_PLANE = "WaitingForControlPlane";
  public static final String PLANNED = "Planned";
  public static final String PAUSED = "Paused";
  public static final String RESUMED = "Resumed";
  public static final String NOT_PAUSED = "NotPaused";
  public static final String HALTED = "Halted";
  public static final String ABORTING = "Aborting";
  public static final String ABORTED = "Aborted";
  public static final String CANCELLING = "Cancelling";
  public static final String SUCCEEDED = "Succeeded";
  public static final String NO_FAILURE = "NoFailure";
  /** The spec changed after the run started (in more than {@code paused}): not applied. */
  public static final String SPEC_CHANGE_REFUSED = "SpecChangeRefused";
  /** The run's target is the spec as it was at start. */
  public static final String SPEC_FROZEN = "SpecFrozen";
  /** Another CR already upgrades the same cluster (or MachineDeployment). */
  public static final String CONFLICTING_UPGRADE = "ConflictingUpgrade";
  /** The run could not be found in Temporal (deleted, or another namespace). */
  public static final String RUN_NOT_FOUND = "RunNotFound";
  /** DrainSkipped: the cluster has one node (nothing to evict to). */
  public static final String SINGLE_NODE_CLUSTER = "SingleNodeCluster";

  // Events about nodes.
  public static final String NODE_STARTED = "NodeUpgradeStarted";
  public static final String NODE_UPGRADED = "NodeUpgraded";
  public static final String NODE_FAILED = "NodeUpgradeFailed";
  public static final String NODE_ROLLING_BACK = "NodeRollingBack";
  public static final String NODE_ROLLED_BACK = "NodeRolledBack";
  public static final String NODE_ROLLBACK_FAILED = "NodeRollbackFailed";
  public static final String NODE_SKIPPED = "NodeSkipped";

  private Reasons() {}
}
