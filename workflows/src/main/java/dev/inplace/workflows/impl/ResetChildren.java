package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodeStatus;
import io.temporal.workflow.Workflow;
import org.slf4j.Logger;

/**
 * A failed node whose NodeUpgrade an operator reset ({@code temporal workflow reset}, docs/runbook.md):
 * the reset run is a new run under the child's workflow ID, whose completion Temporal does not give
 * the parent again (the parent recorded the failed run's). It reports its end to the parent's
 * workflow as every child of a WorkersUpgrade does; from {@link #ADOPT_RESET_CHILD_CHANGE} on, a run takes such a
 * report when it says the node was upgraded, the node is failed in its book under that same
 * workflow ID, and the node's thread has ended: the node becomes upgraded, its message names the
 * reset run and the failure before it, and a halt it caused is lifted. Any other report changes
 * nothing here (the node's own thread takes the reports of the run it follows).
 */
final class ResetChildren {
  private static final Logger log = Workflow.getLogger(ResetChildren.class);

  /** Change ID: runs from this version on take an upgraded end report of a failed node's reset child. */
  static final String ADOPT_RESET_CHILD_CHANGE = "workers-adopt-reset-child";

  private final NodeBook book;
  private final NodeThreads threads;

  ResetChildren(NodeBook book, NodeThreads threads) {
    this.book = book;
    this.threads = threads;
  }

  /** Whether the report is an upgraded end of a reset run of a failed node's child (see the class). */
  static boolean fromReset(NodeBook book, NodeThreads threads, NodeEnd end) {
    if (end == null || !end.upgraded() || end.node() == null || book.finished()) {
      return false;
    }
    NodeStatus status = book.status(end.node());
    return status != null
        && NodeBook.isFailed(status.phase())
        && status.workflowId() != null
        && status.workflowId().equals(end.workflowId())
        && !threads.alive(end.node());
  }

  /** Takes the report when it is one (and the run has the change); returns whether it did. */
  boolean take(NodeEnd end) {
    if (!fromReset(book, threads, end) || Workflow.getVersion(ADOPT_RESET_CHILD_CHANGE, Workflow.DEFAULT_VERSION, 1) < 1) {
      return false;
    }
    NodeStatus failed = book.status(end.node());
    String before = failed.reason() == null ? failed.phase().name() : failed.reason();
    book.upgraded(end.node(), Workflow.currentTimeMillis(), "retried by a reset of " + end.workflowId() + " (run "
        + end.runId() + "): upgraded " + end.result().previousVersion() + " -> " + end.result().version()
        + "; it had failed with " + before + ": " + failed.message());
    log.info("{} upgraded by the reset run {} of {}", end.node(), end.runId(), end.workflowId());
    threads.wake();
    return true;
  }
}
