package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeEnd;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * The nodes a WorkersUpgrade run took over from the run before it at continue-as-new
 * ({@link WorkersUpgradeWorkflowImpl#HAND_OVER_CHANGE}): their children still upgrade them, started
 * by that run with parent close policy abandon. Each gets a node thread, as a node this run started:
 * it counts in the window, waits for its child's end report ({@link NodeEndReports}), records the
 * outcome and unmarks the Machine. A cancellation of the run cancels the child and waits for its
 * report, detached, as for a child of its own.
 *
 * <p>The completion of such a child goes to the run that started it, which is closed; only the
 * child's report reaches this run. Every {@code probeInterval} without one, the thread signals the
 * child's permit (a no-op for a child that holds its turn) to learn whether it still runs: a child
 * that reports sends its report before it ends, so one that ended without it (terminated by hand)
 * is recorded as such, with the node's state unknown, instead of being waited for forever.
 */
final class HandedOverChildren {
  private static final Logger log = Workflow.getLogger(HandedOverChildren.class);

  /** The permit signal's name ({@code NodeUpgradeWorkflow#permit}). */
  private static final String PERMIT = "permit";

  private final NodeBook book;
  private final NodeThreads threads;
  private final NodeEndReports reports;
  private final NodeChildren children;
  private Duration probeInterval = Duration.ofMinutes(1);

  HandedOverChildren(NodeBook book, NodeThreads threads, NodeEndReports reports, NodeChildren children) {
    this.book = book;
    this.threads = threads;
    this.reports = reports;
    this.children = children;
  }

  /** How often a follower checks that a child which has not reported still runs (the run's recorded setting). */
  void probeEvery(Duration interval) {
    probeInterval = interval;
  }

  /** Follows the node's child, which holds its turn: the node is in flight in this run from now on. */
  void follow(MachineInfo machine, String childId, String childRunId) {
    String node = machine.nodeName();
    threads.started(node);
    threads.giveTurn(node);
    threads.following(node, childRunId);
    log.info("{}: following NodeUpgrade {}, handed over by the run before", node, childId);
    Async.procedure(() -> children.nodeThread(node, () -> {
      try {
        ChildOutcomes.recordEnd(book, node, childId, awaitEnd(childId, childRunId));
      } catch (CanceledFailure e) {
        Workflow.newDetachedCancellationScope(() -> {
          cancel(childId);
          ChildOutcomes.recordEnd(book, node, childId, awaitEnd(childId, childRunId));
        }).run();
      } finally {
        children.release(machine);
      }
    }));
  }

  /** The child's end report, or null when it ended without one. */
  private NodeEnd awaitEnd(String childId, String childRunId) {
    while (!Workflow.await(probeInterval, () -> reports.has(childRunId))) {
      if (!stillRuns(childId)) {
        // Closed: had it reported, the report would have come before its end.
        return reports.take(childRunId);
      }
    }
    return reports.take(childRunId);
  }

  private static boolean stillRuns(String childId) {
    try {
      Workflow.newUntypedExternalWorkflowStub(childId).signal(PERMIT);
      return true;
    } catch (CanceledFailure e) {
      throw e;
    } catch (RuntimeException e) {
      log.warn("NodeUpgrade {} cannot be signalled ({}): it ended without reporting", childId, e.toString());
      return false;
    }
  }

  private static void cancel(String childId) {
    try {
      Workflow.newUntypedExternalWorkflowStub(childId).cancel();
    } catch (RuntimeException e) {
      log.warn("could not cancel NodeUpgrade {} ({}); waiting for its end report", childId, e.toString());
    }
  }
}
