package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.ChildWorkflowFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.CancellationScope;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;

/**
 * One node of a parent run, in its own workflow thread: the optional gate, the Machine's
 * skip-remediation mark, the NodeUpgrade child, and the unmark (always, detached from
 * cancellation). Records each outcome in the {@link NodeBook}.
 */
final class NodeChildren {
  private static final Logger log = Workflow.getLogger(NodeChildren.class);

  /**
   * Change ID: runs from this version on start each child with a static summary naming the node,
   * its version before and after and its pool (or the control plane), and static details
   * ({@link ChildRunDescription}). Older runs set a shorter summary and no details.
   */
  static final String CHILD_DESCRIPTIONS_CHANGE = "parent-child-descriptions";

  /**
   * Change ID: runs from this version on prepare nodes ahead of their turn (when the parent allows
   * it: not a control plane whose distribution has an upgrade command, whose first node is decided
   * when it starts): a window's worth of children beyond the window start with {@code awaitPermit},
   * run preflight, stage and backup, and wait; the node loop gives each its turn, and its thread then runs
   * the gate and signals the child's permit. Older runs start each child with its turn.
   */
  static final String PREPARE_AHEAD_CHANGE = "parent-prepares-ahead";

  /**
   * Change ID: runs from this version on that prepare ahead start a node that takes its turn at
   * once (no node waits) with {@code reportStaged}, and prepare no node ahead until each such node
   * has said it is staged (or its thread has ended): at the start of a run the window's first nodes
   * then stage alone, instead of sharing the links and the worker's CPU with as many nodes being
   * prepared. Older runs prepare ahead from the first node on.
   */
  static final String PREPARE_AFTER_STAGED_CHANGE = "parent-prepares-after-staged";

  /**
   * Change ID: runs from this version on that prepare after staged start nodes prepared ahead with
   * {@code reportStaged} too, and stage at most half their look-ahead at once ({@link NodeLoop}): the
   * window's nodes keep the worker's CPU and link. Older runs prepare their whole look-ahead at once.
   */
  static final String PACED_PREPARATION_CHANGE = "parent-paces-preparation";

  private final String kind;
  private final ParentMachineMarks marks;
  private final NodeBook book;
  private final NodeThreads threads;
  private final Consumer<MachineInfo> gate;
  private final Function<MachineInfo, NodeUpgradeRequest> requests;
  private final Consumer<String> warn;
  /** Whether this parent may prepare ahead at all (asked in begin, once the run's template is known). */
  private final BooleanSupplier aheadAllowed;
  /** Whether this run prepares nodes ahead of their turn; set in begin. */
  private boolean preparesAhead;
  /** Whether the nodes it prepares ahead say when they are staged, and only some stage at once; set in begin. */
  private boolean pacesPreparation;
  /** Whether it prepares only once the nodes started with their turn have staged; set in begin. */
  private boolean preparesAfterStaged;
  /**
   * The run's end reports when it hands its children over at continue-as-new (WorkersUpgrade, from
   * change {@code workers-hand-over-children} on; set by {@link #handOver}), else null.
   */
  private NodeEndReports handOver;
  /** How a node's thread takes its child's end (from the completion, or the end report). */
  private final ChildEnds ends;
  /** Whether children start with {@link ChildRunDescription}'s summary and details; set in begin. */
  private boolean describeChildren;
  private ClusterRef cluster;
  private String target;

  /**
   * @param kind the parent's kind ({@link RunSearchAttributes#KIND_CONTROL_PLANE} or {@link
   *     RunSearchAttributes#KIND_WORKERS}), named in each child's static details
   * @param gate runs in the node's thread before anything is changed for it; an {@link
   *     ActivityFailure} fails the node with nothing changed (the control-plane health gate)
   * @param requests the child request for a node, built in the node's thread just before the child starts
   * @param warn adds a warning to the run's status
   * @param aheadAllowed whether the run may prepare nodes ahead of their turn (asked once, in begin)
   */
  NodeChildren(
      String kind, ClusterApiActivities clusterApi, NodeBook book, NodeThreads threads, Consumer<MachineInfo> gate,
      Function<MachineInfo, NodeUpgradeRequest> requests, Consumer<String> warn, BooleanSupplier aheadAllowed) {
    this.kind = kind;
    this.marks = new ParentMachineMarks(clusterApi);
    this.book = book;
    this.threads = threads;
    this.gate = gate;
    this.requests = requests;
    this.warn = warn;
    this.aheadAllowed = aheadAllowed;
    this.ends = new ChildEnds(book, threads);
  }

  /** Decides, once per run and before anything else is recorded, how this run marks Machines and starts children. */
  void begin(ClusterRef cluster, String target) {
    this.cluster = cluster;
    this.target = target;
    marks.begin(cluster.namespace());
    describeChildren = Workflow.getVersion(CHILD_DESCRIPTIONS_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    preparesAhead = Workflow.getVersion(PREPARE_AHEAD_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
        && aheadAllowed.getAsBoolean();
    preparesAfterStaged =
        preparesAhead && Workflow.getVersion(PREPARE_AFTER_STAGED_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    pacesPreparation =
        preparesAfterStaged && Workflow.getVersion(PACED_PREPARATION_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
  }

  /**
   * From now on children start so that the next run can follow them if this one continues as new:
   * their parent close policy is abandon (a cancellation of the run still cancels each child, from
   * its node's thread), they report their end to the parent's workflow, and a node's thread says
   * when it only waits for its child ({@link NodeThreads#following}).
   */
  void handOver(NodeEndReports reports) {
    handOver = reports;
    ends.handOver(reports);
  }

  /** Whether this run prepares nodes ahead of their turn (see {@link #PREPARE_AHEAD_CHANGE}). */
  boolean preparesAhead() {
    return preparesAhead;
  }

  /** Whether this run paces the nodes it prepares ahead (see {@link #PACED_PREPARATION_CHANGE}). */
  boolean pacesPreparation() {
    return pacesPreparation;
  }

  /**
   * Starts the node's thread; the caller has taken it off the book's queue and, in a run that
   * prepares ahead, given it its turn already or not.
   */
  void start(MachineInfo machine, String childId) {
    threads.started(machine.nodeName());
    // A node that starts with its turn runs as in a run that does not prepare ahead.
    if (preparesAhead && !threads.hasTurn(machine.nodeName())) {
      if (pacesPreparation) { // before the loop looks again: the node stages until its child says it has
        threads.awaitStaged(machine.nodeName());
      }
      Async.procedure(() -> runNodeAhead(machine, childId));
    } else {
      boolean reportStaged = preparesAfterStaged;
      if (reportStaged) {
        // Before the loop looks again: it must not prepare the next node before this one has staged.
        threads.awaitStaged(machine.nodeName());
      }
      Async.procedure(() -> runNode(machine, childId, reportStaged));
    }
  }

  /**
   * One node's thread in a run that prepares ahead: mark, start the child (it prepares and waits),
   * wait for the node's turn, run the gate, signal the permit, and record the outcome; a node stood
   * down before its turn goes back to the queue with nothing changed. Unmarks in every case.
   */
  private void runNodeAhead(MachineInfo machine, String childId) {
    nodeThread(machine.nodeName(), () -> upgradeMarkedAhead(machine, childId));
  }

  /** Runs a node's thread body: a bug goes to the main thread; the thread's end is always noted. */
  void nodeThread(String node, Runnable body) {
    try {
      body.run();
    } catch (CanceledFailure e) {
      // The main thread handles the run's cancellation; this node's outcome is already recorded.
    } catch (RuntimeException e) {
      threads.failed(e);
    } finally {
      threads.ended(node);
    }
  }

  private void upgradeMarkedAhead(MachineInfo machine, String childId) {
    String node = machine.nodeName();
    Promise<NodeUpgradeResult> open = null;
    try {
      if (!markForUpgrade(machine)) {
        return;
      }
      book.note(node, "preparing ahead of its turn: NodeUpgrade " + childId);
      NodeUpgradeRequest request =
          reportingEnd(requests.apply(machine).withAwaitPermit(true).withReportStaged(pacesPreparation));
      NodeUpgradeWorkflow child = child(machine, childId, request);
      List<Promise<NodeUpgradeResult>> upgrade = new ArrayList<>();
      CancellationScope scope = Workflow.newCancellationScope(() -> upgrade.add(Async.function(child::upgrade, request)));
      scope.run();
      Promise<NodeUpgradeResult> result = upgrade.get(0);
      String childRunId = null;
      Workflow.await(() -> threads.hasTurn(node) || threads.standingDown(node) != null || result.isCompleted());
      if (!result.isCompleted() && threads.standingDown(node) != null) {
        standDown(node, childId, scope, result);
        return;
      }
      if (!result.isCompleted()) {
        if (!passesGate(machine, scope, result)) {
          return;
        }
        childRunId = Workflow.getWorkflowExecution(child).get().getRunId();
        child.permit();
        book.note(node, "upgrading: NodeUpgrade " + childId);
        if (handOver != null) {
          threads.following(node, childRunId);
        }
      }
      open = ends.record(node, childId, childRunId, result);
    } catch (ActivityFailure | ApplicationFailure e) {
      ChildOutcomes.recordMarkFailure(book, machine, e);
    } catch (ChildWorkflowFailure e) {
      ChildOutcomes.recordFailure(book, node, childId, e);
    } catch (CanceledFailure e) {
      if (threads.hasTurn(node)) {
        book.failed(node, now(), NodePhase.ROLLED_BACK, null, UpgradeFailures.CANCELLED,
            "cancelled with the run; NodeUpgrade " + childId + " puts the node back (see its result)");
      } else {
        book.failed(node, now(), NodePhase.FAILED, null, UpgradeFailures.CANCELLED,
            "cancelled with the run before its turn; NodeUpgrade " + childId + " stands down: nothing was changed on "
                + node);
      }
    } finally {
      release(machine);
      ends.awaitClose(node, open);
    }
  }

  /**
   * The node's turn came: its gate (the control-plane health gate; none for a pool). A failed gate
   * stands the child down (it changed nothing) and records why.
   */
  private boolean passesGate(MachineInfo machine, CancellationScope scope, Promise<NodeUpgradeResult> result) {
    String node = machine.nodeName();
    try {
      gate.accept(machine);
      return true;
    } catch (ActivityFailure e) {
      scope.cancel();
      awaitEnd(result);
      ChildOutcomes.recordGateFailure(book, node, e);
      return false;
    }
  }

  /**
   * Stands a waiting child down: cancels it (it ends with nothing changed) and puts the node back
   * in the queue. A child that ended otherwise meanwhile (already at the target, or failed before
   * its turn) is recorded as such.
   */
  private void standDown(String node, String childId, CancellationScope scope, Promise<NodeUpgradeResult> result) {
    String why = threads.standingDown(node);
    scope.cancel();
    awaitEnd(result);
    try {
      NodeUpgradeResult done = result.get();
      book.upgraded(node, now(), "already at " + done.version());
    } catch (ChildWorkflowFailure e) {
      if (ChildOutcomes.stoodDown(e)) {
        requeue(node, why);
      } else {
        ChildOutcomes.recordFailure(book, node, childId, e);
      }
    } catch (CanceledFailure e) {
      // Cancelled before the child was even started: nothing ran.
      requeue(node, why);
    }
  }

  private void requeue(String node, String why) {
    book.requeue(node, why);
    log.info("{} stood down before its turn ({}): back in the queue", node, why);
  }

  /** Waits for the child to end, whatever the run's own cancellation. */
  static void awaitEnd(Promise<NodeUpgradeResult> result) {
    Workflow.newDetachedCancellationScope(() -> Workflow.await(result::isCompleted)).run();
  }


  /** One node's thread: gate, mark, child, unmark. Records the outcome in the book. */
  private void runNode(MachineInfo machine, String childId, boolean reportStaged) {
    nodeThread(machine.nodeName(), () -> {
      try {
        gate.accept(machine);
      } catch (ActivityFailure e) {
        ChildOutcomes.recordGateFailure(book, machine.nodeName(), e);
        return;
      }
      upgradeMarked(machine, childId, reportStaged);
    });
  }

  /** The request with the end report asked for, in a run that hands its children over. */
  private NodeUpgradeRequest reportingEnd(NodeUpgradeRequest request) {
    return handOver == null ? request : request.withReportEnd(true);
  }

  /**
   * The node is done: frees its window slot first, so the next node starts while this Machine is
   * unmarked, instead of one activity round trip later; then unmarks it.
   */
  void release(MachineInfo machine) {
    if (handOver != null) {
      handOver.forget(machine.nodeName());
    }
    threads.unmarking(machine.nodeName());
    try {
      unmark(machine);
    } finally {
      threads.unmarked(machine.nodeName());
    }
  }

  private void upgradeMarked(MachineInfo machine, String childId, boolean reportStaged) {
    String node = machine.nodeName();
    Promise<NodeUpgradeResult> open = null;
    try {
      if (!markForUpgrade(machine)) {
        return;
      }
      book.note(node, "upgrading: NodeUpgrade " + childId);
      NodeUpgradeRequest request = reportingEnd(reportStaged
          ? requests.apply(machine).withReportStaged(true)
          : requests.apply(machine));
      NodeUpgradeWorkflow child = child(machine, childId, request);
      if (handOver == null) {
        ChildOutcomes.recordUpgraded(book, node, child.upgrade(request));
      } else {
        Promise<NodeUpgradeResult> result = Async.function(child::upgrade, request);
        String childRunId = Workflow.getWorkflowExecution(child).get().getRunId();
        threads.following(node, childRunId);
        open = ends.record(node, childId, childRunId, result);
      }
    } catch (ActivityFailure | ApplicationFailure e) {
      ChildOutcomes.recordMarkFailure(book, machine, e);
    } catch (ChildWorkflowFailure e) {
      ChildOutcomes.recordFailure(book, node, childId, e);
    } catch (CanceledFailure e) {
      book.failed(node, now(), NodePhase.ROLLED_BACK, null, UpgradeFailures.CANCELLED,
          "cancelled with the run; NodeUpgrade " + childId + " puts the node back (see its result)");
    } finally {
      release(machine);
      ends.awaitClose(node, open);
    }
  }

  /**
   * Marks the Machine before its child starts. False when the run was cancelled while the batch
   * ran (a batch is not cancelled with the run): the node is recorded as never started, and its
   * thread's end removes the mark.
   */
  private boolean markForUpgrade(MachineInfo machine) {
    marks.set(machine, true);
    if (marks.batched() && CancellationScope.current().isCancelRequested()) {
      ChildOutcomes.recordCancelledBeforeStart(book, machine.nodeName());
      return false;
    }
    return true;
  }

  /** Removes the skip-remediation mark: after success, failure or cancellation alike. */
  private void unmark(MachineInfo machine) {
    try {
      Workflow.newDetachedCancellationScope(() -> marks.set(machine, false)).run();
    } catch (ActivityFailure | ApplicationFailure e) {
      String warning = "could not remove " + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION + " from Machine "
          + machine.name() + ": " + Failures.describe(e);
      book.warn(machine.nodeName(), warning);
      warn.accept(warning);
    }
  }

  private NodeUpgradeWorkflow child(MachineInfo machine, String childId, NodeUpgradeRequest request) {
    return NodeChildStubs.stub(kind, cluster, target, machine, childId, request, describeChildren, handOver != null);
  }

  private static long now() {
    return Workflow.currentTimeMillis();
  }
}
