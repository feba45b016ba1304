package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.NodeUpgradeResult;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;

/**
 * How a node's thread in a parent run takes the end of its NodeUpgrade child: from the child's
 * completion, or, in a run that hands its children over and from {@link #END_ON_REPORT_CHANGE} on,
 * from the child's end report when that comes first.
 */
final class ChildEnds {
  /**
   * Change ID: runs from this version on that hand their children over take a node's outcome from
   * its child's end report when the report comes before the child's completion (the child reports
   * what it is about to return): the node's window slot frees one workflow task of the child (its
   * last) and one of the parent sooner, and the node's thread then waits for the child to close.
   * Older runs wait for the completion.
   */
  static final String END_ON_REPORT_CHANGE = "workers-end-on-report";

  private final NodeBook book;
  private final NodeThreads threads;
  private NodeEndReports reports;
  private boolean onReport;

  ChildEnds(NodeBook book, NodeThreads threads) {
    this.book = book;
    this.threads = threads;
  }

  /** The run hands its children over: from the change on, an end report may end a node first. */
  void handOver(NodeEndReports endReports) {
    reports = endReports;
    onReport = Workflow.getVersion(END_ON_REPORT_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
  }

  /**
   * Records the node's outcome from the first of its child's completion and (see the change) its
   * end report. Returns the child while it is still open after its report, else null. A failed child
   * throws as {@link Promise#get} does.
   *
   * @param childRunId the child's run ID once it has its turn, or null (then only its completion counts)
   */
  Promise<NodeUpgradeResult> record(
      String node, String childId, String childRunId, Promise<NodeUpgradeResult> result) {
    if (onReport && childRunId != null && awaitReportOrEnd(childRunId, result) && !result.isCompleted()) {
      ChildOutcomes.recordEnd(book, node, childId, reports.take(childRunId));
      return result;
    }
    ChildOutcomes.recordUpgraded(book, node, result.get());
    return null;
  }

  /**
   * Waits for the child's report or end. False when the run is cancelled meanwhile: then, as
   * before the change, the node's outcome waits for the child's own end (it puts the node back), and
   * the Machine stays marked until then.
   */
  private boolean awaitReportOrEnd(String childRunId, Promise<NodeUpgradeResult> result) {
    try {
      Workflow.await(() -> result.isCompleted() || reports.has(childRunId));
      return true;
    } catch (CanceledFailure e) {
      return false;
    }
  }

  /**
   * After an outcome from the report, once the Machine is unmarked: the node's thread stays alive
   * until its child closes, so the node never starts again beside its previous child.
   */
  void awaitClose(String node, Promise<NodeUpgradeResult> open) {
    if (open != null) {
      threads.closing(node);
      NodeChildren.awaitEnd(open);
    }
  }
}
