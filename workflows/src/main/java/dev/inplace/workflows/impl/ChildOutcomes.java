package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.client.WorkflowExecutionAlreadyStarted;
import io.temporal.common.converter.DataConverterException;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.TemporalFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.ChildWorkflowFailure;
import io.temporal.workflow.Workflow;
import org.slf4j.Logger;

/**
 * How a parent run reads the end of a NodeUpgrade child that failed, and records it in its book;
 * also a node that failed before its child started (its gate, its Machine's mark).
 */
final class ChildOutcomes {
  private static final Logger log = Workflow.getLogger(ChildOutcomes.class);

  private ChildOutcomes() {}

  /** Records the child's failure: its own NodeFailure when it carries one, else what its cause tells. */
  static void recordFailure(NodeBook book, String node, String childId, ChildWorkflowFailure e) {
    Throwable cause = e.getCause();
    long now = Workflow.currentTimeMillis();
    if (cause instanceof ApplicationFailure app) {
      recordFailed(book, node, now, nodeFailure(app), app.getType(), app.getOriginalMessage());
    } else if (cause instanceof CanceledFailure) {
      recordCancelled(book, node, now, childId);
    } else if (cause instanceof WorkflowExecutionAlreadyStarted) {
      book.failed(node, now, NodePhase.FAILED, null, UpgradeFailures.NODE_UPGRADE_FAILED,
          "NodeUpgrade " + childId + " already exists (running, or completed); nothing was started");
    } else {
      book.failed(node, now, NodePhase.ROLLBACK_FAILED, null, UpgradeFailures.NODE_UPGRADE_FAILED,
          "NodeUpgrade " + childId + " ended without a result (" + Failures.describe(e)
              + "); the node's state is unknown: check it");
    }
    log.warn("{} failed: {}", node, book.status(node).message());
  }

  /**
   * Records the end of a child the run took over at continue-as-new, from the child's end report:
   * what {@link #recordFailure} (or the upgraded result) would have recorded from its completion.
   * No report (the child ended without one: terminated by hand) leaves the node's state unknown.
   */
  static void recordEnd(NodeBook book, String node, String childId, NodeEnd end) {
    long now = Workflow.currentTimeMillis();
    if (end == null) {
      book.failed(node, now, NodePhase.ROLLBACK_FAILED, null, UpgradeFailures.NODE_UPGRADE_FAILED,
          "NodeUpgrade " + childId + " ended without reporting how (terminated?); the node's state is unknown: check it");
    } else if (end.upgraded()) {
      recordUpgraded(book, node, end.result());
      return;
    } else if (end.failure() == null && UpgradeFailures.CANCELLED.equals(end.failureType())) {
      recordCancelled(book, node, now, childId);
    } else {
      recordFailed(book, node, now, end.failure(), end.failureType(), end.failureMessage());
    }
    log.warn("{} failed: {}", node, book.status(node).message());
  }

  /** A child's result: the node runs the target (or already did). */
  static void recordUpgraded(NodeBook book, String node, NodeUpgradeResult result) {
    book.upgraded(node, Workflow.currentTimeMillis(), result.alreadyAtTarget()
        ? "already at " + result.version()
        : "upgraded " + result.previousVersion() + " -> " + result.version());
    log.info("{} upgraded to {}", node, result.version());
  }

  /** A child's failure: its NodeFailure when it carries one, else its type and message. */
  private static void recordFailed(
      NodeBook book, String node, long now, NodeFailure failure, String type, String message) {
    if (failure != null) {
      NodePhase phase = failure.phase() == null ? NodePhase.FAILED : failure.phase();
      book.failed(node, now, phase, failure.failedStep(), failure.reason(), failure.message());
    } else {
      book.failed(node, now, NodePhase.FAILED, null, type, message);
    }
  }

  private static void recordCancelled(NodeBook book, String node, long now, String childId) {
    book.failed(node, now, NodePhase.ROLLED_BACK, null, UpgradeFailures.CANCELLED,
        "NodeUpgrade " + childId + " was cancelled and puts the node back (see its result)");
  }

  /** The NodeFailure a NodeUpgrade's failure carries as its details, or null. */
  static NodeFailure nodeFailure(ApplicationFailure failure) {
    if (failure.getDetails() == null || failure.getDetails().getSize() == 0) {
      return null;
    }
    try {
      return failure.getDetails().get(NodeFailure.class);
    } catch (DataConverterException e) {
      return null;
    }
  }

  /** Whether the child ended because it was stood down (cancelled before its turn, nothing changed). */
  static boolean stoodDown(ChildWorkflowFailure e) {
    Throwable cause = e.getCause();
    return cause instanceof CanceledFailure
        || cause instanceof ApplicationFailure app && UpgradeFailures.CANCELLED.equals(app.getType());
  }

  /** The gate before a node failed: the node fails with nothing changed on it. */
  static void recordGateFailure(NodeBook book, String node, ActivityFailure e) {
    if (Failures.isCancellation(e)) {
      book.failed(node, Workflow.currentTimeMillis(), NodePhase.FAILED, null, UpgradeFailures.CANCELLED,
          "cancelled before it started; nothing was changed");
    } else {
      book.failed(node, Workflow.currentTimeMillis(), NodePhase.FAILED, UpgradeStep.PREFLIGHT,
          Failures.typeOf(e, UpgradeFailures.CONTROL_PLANE_UNHEALTHY),
          "health gate before " + node + " failed: " + Failures.describe(e) + "; nothing was changed on " + node);
    }
  }

  /** The Machine's mark could not be set: the node fails with nothing changed on it. */
  static void recordMarkFailure(NodeBook book, MachineInfo machine, TemporalFailure e) {
    String node = machine.nodeName();
    if (Failures.isCancellation(e)) {
      recordCancelledBeforeStart(book, node);
    } else {
      book.failed(node, Workflow.currentTimeMillis(), NodePhase.FAILED, null, Failures.typeOf(e, UpgradeFailures.KUBERNETES_API_ERROR),
          "could not mark Machine " + machine.name() + " as upgrading: " + Failures.describe(e)
              + "; nothing was changed on " + node);
    }
  }

  /** The run was cancelled while the node's Machine was being marked: its child never started. */
  static void recordCancelledBeforeStart(NodeBook book, String node) {
    book.failed(node, Workflow.currentTimeMillis(), NodePhase.FAILED, null, UpgradeFailures.CANCELLED,
        "cancelled before it started; nothing was changed");
  }
}
