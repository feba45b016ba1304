package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.ControlPlaneVersionRequest;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.ObjectRef;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Workflow;
import java.util.function.Consumer;

/**
 * The control-plane object's pause for a ControlPlaneUpgrade run: whether this run's version pauses
 * it ({@code control-plane-paused-for-run}), whether it did, and what the end of a run that did not
 * record the version does with it.
 */
final class ControlPlanePause {
  private final ClusterApiActivities clusterApi;
  private final NodeBook book;
  /** This run's version of the change (decided once, after the snapshot). */
  private int version = Workflow.DEFAULT_VERSION;
  /** Whether this run paused the control-plane object (it had nodes to upgrade). */
  private boolean paused;
  /** Whether the run ends with the control-plane object left paused (mixed versions). */
  private boolean leftPaused;

  ControlPlanePause(ClusterApiActivities clusterApi, NodeBook book) {
    this.clusterApi = clusterApi;
    this.book = book;
  }

  void version(int version) {
    this.version = version;
  }

  boolean pausesForTheRun() {
    return version >= 1;
  }

  void paused() {
    paused = true;
  }

  boolean leftPaused() {
    return leftPaused;
  }

  /**
   * At the end of a run that did not record the version: with mixed versions (a node runs the
   * target, or its state is unknown after a failed rollback) the control-plane object stays paused,
   * since unpaused its controller would replace the upgraded Machines; with no node changed, the run
   * removes its own pause (version 2 on). Returns what the end line says about it.
   */
  String releaseOrKeep(ClusterRef cluster, ObjectRef controlPlane, String target, Consumer<String> warn) {
    if (!paused) {
      return "";
    }
    String object = controlPlane.kind() + " " + controlPlane.name();
    boolean mixed = book.upgraded() > 0
        || book.statuses().stream().anyMatch(s -> s.phase() == NodePhase.ROLLBACK_FAILED);
    if (mixed) {
      leftPaused = true;
      return "; " + object + " stays paused (" + ClusterApiActivities.PAUSED_ANNOTATION
          + ") because its nodes run mixed versions: set its spec.version or roll the nodes back, then unpause it";
    }
    if (version < 2) {
      return "";
    }
    try {
      BookkeepingResult released = clusterApi.releaseControlPlane(new ControlPlaneVersionRequest(
          cluster.namespace(), controlPlane, target, Workflow.getInfo().getWorkflowId()));
      return released == null || released.patches().isEmpty()
          ? "; no node changed; " + object + " holds no pause of this run (someone else's stays)"
          : "; no node changed, " + object + " unpaused";
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      leftPaused = true;
      String warning = "could not unpause " + object + ": " + Failures.describe(e)
          + "; remove " + ClusterApiActivities.PAUSED_ANNOTATION + " from it";
      warn.accept(warning);
      return "; " + warning;
    }
  }

}
