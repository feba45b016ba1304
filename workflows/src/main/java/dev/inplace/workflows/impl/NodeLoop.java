package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import org.slf4j.Logger;

/**
 * The node loop of a parent run, on its main thread: starts the next node while the window, the
 * controls, the failure policy, the maintenance window and the soak allow, sleeps until a node
 * thread or a control changes something, and returns when the run is done or should continue as new.
 */
final class NodeLoop {
  private static final Logger log = Workflow.getLogger(NodeLoop.class);

  /**
   * History events one node adds to its parent, rounded up: mark, child, unmark and the workflow
   * tasks around them (about 10 with a wide window, 22 one node at a time).
   */
  static final int EVENTS_PER_NODE = 20;

  /**
   * No run's history goes past this, whatever the limit and window: Temporal warns at 10,240 events
   * and a replay of a long history is slow.
   */
  static final long HISTORY_CEILING = 9_000;

  /** How the node loop ended. */
  enum End {
    /** Every node resolved, or aborted with nothing in flight. */
    DONE,
    /** History is long: nothing in flight; the caller continues as new. */
    CONTINUE_AS_NEW
  }

  private final NodeBook book;
  private final NodeThreads threads;
  private final RunRules rules;
  private final RunStatus status;
  private final NodeChildren children;
  private ClusterRef cluster;
  private String target;
  private MaintenanceWindow maintenance;
  private long soakSeconds;
  private int startedThisRun;
  private boolean stoppingForHistory;

  NodeLoop(NodeBook book, NodeThreads threads, RunRules rules, RunStatus status, NodeChildren children) {
    this.book = book;
    this.threads = threads;
    this.rules = rules;
    this.status = status;
    this.children = children;
  }

  void begin(ClusterRef cluster, String target, MaintenanceWindow maintenance, long soakSeconds) {
    this.cluster = cluster;
    this.target = target;
    this.maintenance = maintenance;
    this.soakSeconds = soakSeconds;
  }

  /** Nodes this run (since the last continue-as-new) has started. */
  int startedThisRun() {
    return startedThisRun;
  }

  /**
   * Runs the loop. With HALT a failure never ends it: it waits for retryNode, skipNode or abort.
   */
  End run() {
    status.looping(true);
    while (true) {
      // A bug in a node thread, not a node failure: fail the workflow task so a fixed worker resumes.
      threads.rethrowBug();
      if (book.done(rules.failurePolicy(), rules.maxFailures()) && threads.noneUnmarking()) {
        status.looping(false);
        return End.DONE;
      }
      if (!stoppingForHistory && historyTooLong()) {
        stoppingForHistory = true;
        status.stoppingForHistory();
        log.info("history at {} events: no new node starts; continuing as new once {} finish",
            Workflow.getInfo().getHistoryLength(), threads.runningNodes());
      }
      if (stoppingForHistory && threads.settled()) {
        status.looping(false);
        return End.CONTINUE_AS_NEW;
      }
      status.waiting(0, 0);
      Duration wait = null;
      if (mayStartMore()) {
        long now = Workflow.currentTimeMillis();
        Duration closed = maintenance == null ? Duration.ZERO : maintenance.waitFrom(now);
        long soakEnd = soakSeconds > 0 && book.lastFinishedMillis() > 0
            ? book.lastFinishedMillis() + soakSeconds * 1000
            : 0;
        if (!closed.isZero()) {
          status.waiting(now + closed.toMillis(), 0);
          wait = closed;
        } else if (soakEnd > now) {
          status.waiting(0, soakEnd);
          wait = Duration.ofMillis(soakEnd - now);
        } else {
          startNext(now);
          continue;
        }
      }
      status.publish();
      threads.clearWake();
      if (wait == null) {
        Workflow.await(threads::woken);
      } else {
        Workflow.await(wait, threads::woken);
      }
    }
  }

  /**
   * After a cancellation of the run: lets every node in flight finish (their NodeUpgrade children
   * roll back and the Machines are unmarked), detached from the cancellation, then ends as aborted.
   */
  void waitForNodesAfterCancellation() {
    Workflow.newDetachedCancellationScope(
            () -> {
              book.finish();
              status.setPhase(RunPhase.ABORTING, "cancelled: waiting for nodes in flight to be put back");
              Workflow.await(threads::settled);
              status.setPhase(RunPhase.ABORTED, "cancelled; " + status.counts());
            })
        .run();
  }

  /**
   * Whether to stop starting nodes so the run can continue as new: once the history, plus what the
   * nodes in flight and one more would add, passes the limit (or the server suggests it). Never
   * before this run has started a node, so even a tiny limit makes progress. The limit grows with a
   * wide window (up to {@link #HISTORY_CEILING}) so the history budget never narrows the window.
   */
  private boolean historyTooLong() {
    if (rules.historyLimit() <= 0 || startedThisRun == 0) {
      return false;
    }
    // A window wider than the limit allows is still filled, up to the ceiling.
    long limit = Math.min(HISTORY_CEILING, Math.max(rules.historyLimit(), (long) (rules.window() + 1) * EVENTS_PER_NODE));
    long projected = Workflow.getInfo().getHistoryLength() + (long) (threads.running() + 1) * EVENTS_PER_NODE;
    return projected > limit || Workflow.getInfo().isContinueAsNewSuggested();
  }

  private boolean mayStartMore() {
    return !stoppingForHistory
        && !book.aborting()
        && !book.paused()
        && !book.halted(rules.failurePolicy(), rules.maxFailures())
        && book.nextPending().isPresent()
        && threads.running() < rules.window();
  }

  private void startNext(long now) {
    String node = book.nextPending().orElseThrow();
    MachineInfo machine = book.machine(node);
    String childId = WorkflowIds.nodeUpgrade(cluster.namespace(), machine.name(), target);
    book.start(now, childId);
    startedThisRun++;
    log.info("starting {} ({}): {} in flight", node, childId, threads.running() + 1);
    children.start(machine, childId);
  }
}
