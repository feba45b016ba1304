package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.ControlPlaneVersionRequest;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Workflow;
import java.util.function.Consumer;
import org.slf4j.Logger;

/**
 * The control-plane object's pause for a ControlPlaneUpgrade run: whether this run's version pauses
 * it ({@code control-plane-paused-for-run}), whether it did, and what the end of a run that did not
 * record the version does with it.
 */
final class ControlPlanePause {
  private static final Logger log = Workflow.getLogger(ControlPlanePause.class);
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

  /**
   * Pauses the control-plane object for the run (before any Machine records the new version), so
   * its controller never sees an upgraded Machine as outdated and replaces it. Recording the
   * version at the end unpauses it. Refuses the run, having changed nothing, if the pause fails.
   */
  void pause(ClusterRef cluster, ObjectRef controlPlane, String target, RunStatus status) {
    if (book.nextPending().isEmpty()) {
      return; // every control plane already runs the target: nothing will race
    }
    try {
      BookkeepingResult done = clusterApi.pauseControlPlane(new ControlPlaneVersionRequest(
          cluster.namespace(), controlPlane, target, Workflow.getInfo().getWorkflowId()));
      paused = true;
      log.info("{} {}: {}", controlPlane.kind(), controlPlane.name(),
          done == null || done.patches().isEmpty() ? "already paused" : String.join("; ", done.patches()));
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      throw status.refuse(Failures.typeOf(e, UpgradeFailures.KUBERNETES_API_ERROR),
          "could not pause " + controlPlane.kind() + " " + controlPlane.name() + ": " + Failures.describe(e)
              + "; nothing was changed");
    }
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
