package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.List;
import org.slf4j.Logger;

/**
 * The node loop of a parent run, on its main thread: starts the next node while the window, the
 * controls, the failure policy, the maintenance window and the soak allow, sleeps until a node
 * thread or a control changes something, and returns when the run is done or should continue as new.
 *
 * <p>A run that prepares ahead ({@link NodeChildren#preparesAhead}) starts the children of up to a
 * window's worth of nodes beyond its window; they run preflight, stage and backup, which change nothing a
 * workload sees, and wait. The loop gives them their turn (the permit to cordon) in start order
 * while fewer than the window hold one and the controls, the maintenance window and the soak allow:
 * the window bounds disruption, not preparation. A pause, a halt, an abort or a skip stands the
 * waiting nodes down (their children end with nothing changed) and puts them back in the queue.
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

  /**
   * The most nodes a run prepares ahead of their turn, whatever its window: enough to keep the next
   * nodes staged while the window's nodes restart, few enough that a wide window does not double the
   * run's children (each prepared node is a child, a thread and a signal in the parent; with a window
   * of 100 and as many prepared, the 1,000-node test took 292 s instead of about 60 s).
   */
  static final int MAX_PREPARED_AHEAD = 10;

  /**
   * Change ID: runs from this version on that start each node with its turn (no node prepared
   * ahead) start a node only once no thread of its own is left: a node retried while its earlier
   * thread still unmarks its Machine waits for that unmark. Before, it started at once, and the old
   * thread's end then dropped the new one from the window, so the next node could start beside it.
   * Asked only when that happens, so other runs record no marker.
   */
  static final String START_AFTER_OLD_THREAD_CHANGE = "parent-starts-after-old-thread";

  /** How the node loop ended. */
  enum End {
    /** Every node resolved, or aborted with nothing in flight. */
    DONE,
    /**
     * History is long: nothing in flight, or (a run that hands its children over) only nodes whose
     * threads wait for their children; the caller continues as new.
     */
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
  /** Nodes this run gave a turn to, or started with one. */
  private int turnsThisRun;
  private boolean stoppingForHistory;
  /** Whether the run hands its children over at continue-as-new instead of letting them finish first. */
  private boolean handsOver;

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

  /**
   * From now on the run continues as new without waiting for the children that hold their turn
   * (the caller hands them over); nodes prepared ahead that wait for their turn are stood down.
   */
  void handOver() {
    handsOver = true;
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
      // settled, not only none unmarking: prepared nodes are PENDING in the book but have a thread.
      if (book.done(rules.failurePolicy(), rules.maxFailures()) && threads.settled()) {
        status.looping(false);
        return End.DONE;
      }
      if (!stoppingForHistory && historyTooLong()) {
        stoppingForHistory = true;
        status.stoppingForHistory();
        log.info("history at {} events: no new node starts; continuing as new once {} finish",
            Workflow.getInfo().getHistoryLength(), threads.runningNodes());
      }
      if (stoppingForHistory && (threads.settled() || handsOver && threads.onlyFollowing())) {
        status.looping(false);
        return End.CONTINUE_AS_NEW;
      }
      boolean ahead = children.preparesAhead();
      if (ahead && standDownWhereHeld()) {
        continue;
      }
      status.waiting(0, 0);
      Duration wait = null;
      if (ahead ? mayGiveTurn() || mayStartWithTurn() : mayStartMore()) {
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
        } else if (ahead && mayGiveTurn()) {
          giveNextTurn(now);
          continue;
        } else {
          startNext(now);
          continue;
        }
      }
      if (ahead && mayPrepareMore()) {
        long now = Workflow.currentTimeMillis();
        Duration closed = maintenance == null ? Duration.ZERO : maintenance.waitFrom(now);
        if (closed.isZero()) {
          prepareNext();
          continue;
        }
        status.waiting(now + closed.toMillis(), 0);
        wait = wait == null || closed.compareTo(wait) < 0 ? closed : wait;
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
   * before this run has started a node (a run that hands over: given a node its turn), so even a
   * tiny limit makes progress. The limit grows with a
   * wide window (up to {@link #HISTORY_CEILING}) so the history budget never narrows the window.
   */
  private boolean historyTooLong() {
    // A run that hands its nodes over may have started (prepared) nodes only to stand them down:
    // it must have given a turn, or runs could follow one another without any node moving on.
    if (rules.historyLimit() <= 0 || (handsOver ? turnsThisRun : startedThisRun) == 0) {
      return false;
    }
    // A window wider than the limit allows is still filled, up to the ceiling.
    int started = rules.window() + (children.preparesAhead() ? lookAhead() : 0);
    long limit = Math.min(HISTORY_CEILING, Math.max(rules.historyLimit(), (long) (started + 1) * EVENTS_PER_NODE));
    long projected = Workflow.getInfo().getHistoryLength() + (long) (threads.running() + 1) * EVENTS_PER_NODE;
    return projected > limit || Workflow.getInfo().isContinueAsNewSuggested();
  }

  private boolean mayStartMore() {
    return !stoppingForHistory
        && !book.aborting()
        && !book.paused()
        && !book.halted(rules.failurePolicy(), rules.maxFailures())
        && book.nextPending().isPresent()
        && threads.running() < rules.window()
        && !waitsForOldThread(book.nextPending().get());
  }

  /** The node still has a thread from before (see {@link #START_AFTER_OLD_THREAD_CHANGE}); its end wakes the loop. */
  private boolean waitsForOldThread(String node) {
    return threads.alive(node)
        && Workflow.getVersion(START_AFTER_OLD_THREAD_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
  }

  /**
   * Whether no node may take its turn: for a reason an operator must lift (or an abort), or the run
   * is about to hand its children over.
   */
  private boolean held() {
    return book.aborting() || book.paused() || book.halted(rules.failurePolicy(), rules.maxFailures())
        || handsOver && stoppingForHistory;
  }

  /**
   * Stands down the nodes that wait for their turn while the run is held (paused, halted,
   * aborting), and any the operator skipped, so no prepared node waits on an operator; each goes
   * back to the queue once its child has ended with nothing changed.
   */
  private boolean standDownWhereHeld() {
    boolean held = held();
    List<String> down = threads.waitingNodes().stream()
        .filter(n -> held || book.status(n).phase() != NodePhase.PENDING)
        .toList();
    if (down.isEmpty()) {
      return false;
    }
    String why = book.aborting() ? "aborted" : book.paused() ? "paused"
        : handsOver && stoppingForHistory ? "continuing as new" : held ? "halted" : "skipped";
    down.forEach(n -> threads.standDown(n, why));
    log.info("standing down {} before their turn ({})", down, why);
    return true;
  }

  private boolean mayGiveTurn() {
    return !held() && !threads.waitingNodes().isEmpty() && threads.turnsTaken() < rules.window();
  }

  /** No node waits and the window has room: the next node starts with its turn, as without preparing ahead. */
  private boolean mayStartWithTurn() {
    return !stoppingForHistory
        && !held()
        && nextPendingIsFree()
        && threads.waitingNodes().isEmpty()
        && threads.turnsTaken() < rules.window();
  }

  /**
   * Up to a window's worth of nodes beyond the window (at most {@link #MAX_PREPARED_AHEAD}) are
   * prepared ahead, once the nodes that started with their turn have staged
   * ({@link NodeChildren#PREPARE_AFTER_STAGED_CHANGE}), and, in a run that paces them, while fewer
   * than {@link #stagingAtOnce} of them are still staging.
   */
  private boolean mayPrepareMore() {
    return !stoppingForHistory
        && !held()
        && !threads.anyUnstaged()
        && (!children.pacesPreparation() || threads.stagingAhead() < stagingAtOnce())
        && nextPendingIsFree()
        && threads.running() < rules.window() + lookAhead();
  }

  /**
   * How many nodes prepared ahead stage at once in a run that paces them ({@link
   * NodeChildren#PACED_PREPARATION_CHANGE}): half the look-ahead, rounded up. Measured on two cores
   * (docs/benchmarks.md): with all five of a window of 5 staging at once, the window's own installs
   * and restarts waited for the CPU; with three, the next node was still staged before its turn.
   */
  private int stagingAtOnce() {
    return (lookAhead() + 1) / 2;
  }

  /**
   * There is a next node, and no thread of its own is left from before (a node stood down goes back
   * to the queue while its thread unmarks it; its end wakes the loop).
   */
  private boolean nextPendingIsFree() {
    return book.nextPending().filter(node -> !threads.alive(node)).isPresent();
  }

  /** How many nodes beyond the window are prepared: a window's worth, at most {@link #MAX_PREPARED_AHEAD}. */
  private int lookAhead() {
    return Math.min(rules.window(), MAX_PREPARED_AHEAD);
  }

  private void giveNextTurn(long now) {
    String node = threads.waitingNodes().get(0);
    book.takeTurn(node, now);
    turnsThisRun++;
    log.info("{} takes its turn: {} of {} in the window", node, threads.turnsTaken() + 1, rules.window());
    threads.giveTurn(node);
  }

  private void prepareNext() {
    MachineInfo machine = book.machine(book.nextPending().orElseThrow());
    String childId = WorkflowIds.nodeUpgrade(cluster.namespace(), machine.name(), target);
    book.prepare(childId);
    startedThisRun++;
    log.info("preparing {} ({}) ahead: {} started, {} with a turn", machine.nodeName(), childId,
        threads.running() + 1, threads.turnsTaken());
    children.start(machine, childId);
  }

  private void startNext(long now) {
    String node = book.nextPending().orElseThrow();
    MachineInfo machine = book.machine(node);
    String childId = WorkflowIds.nodeUpgrade(cluster.namespace(), machine.name(), target);
    book.start(now, childId);
    startedThisRun++;
    turnsThisRun++;
    log.info("starting {} ({}): {} in flight", node, childId, threads.running() + 1);
    if (children.preparesAhead()) {
      threads.started(node);
      threads.giveTurn(node);
    }
    children.start(machine, childId);
  }
}
