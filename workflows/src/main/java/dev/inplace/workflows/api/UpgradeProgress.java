package dev.inplace.workflows.api;

import java.util.List;

/**
 * What a parent run's {@code progress} query returns.
 *
 * @param phase one of {@link RunPhase}
 * @param maxUnavailable the window as configured (count or percent); {@code window} its size now
 */
public record UpgradeProgress(
    String kind,
    ClusterRef cluster,
    String targetVersion,
    RunPhase phase,
    String message,
    boolean paused,
    String maxUnavailable,
    int window,
    int total,
    int upgraded,
    int failed,
    int skipped,
    int inFlight,
    String etcdSnapshot,
    List<NodeStatus> nodes) {

  /** Where a parent run stands. */
  public enum RunPhase {
    PREFLIGHT,
    WAITING_FOR_WINDOW,
    UPGRADING,
    PAUSED,
    /** A node failed; waiting for retryNode, skipNode or abort. */
    HALTED,
    ABORTING,
    RECORDING,
    SUCCEEDED,
    FAILED,
    ABORTED
  }
}
