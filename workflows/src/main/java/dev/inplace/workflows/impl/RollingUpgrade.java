package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.SearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.api.enums.v1.ParentClosePolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowExecutionAlreadyStarted;
import io.temporal.common.converter.DataConverterException;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.ChildWorkflowFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.ChildWorkflowOptions;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * What ControlPlaneUpgrade and WorkersUpgrade share: the node loop (a sliding window of NodeUpgrade
 * children), the per-node Machine bookkeeping around each child, the operator controls (the
 * UpgradeControls Updates, validators and progress query, which the subclasses' workflow interfaces
 * declare), search attributes and the one-line status shown in the Temporal UI.
 *
 * <p>Each node runs in its own workflow thread: optional gate, mark the Machine, the child, unmark
 * the Machine (always, detached from cancellation). The main thread only decides when to start the
 * next node and sleeps on {@link #changed}, which node threads and control handlers set.
 */
abstract class RollingUpgrade {
  private static final Logger log = Workflow.getLogger(RollingUpgrade.class);

  /** At most this many node names go into the InplaceNode search attribute (visibility limits its size). */
  static final int NODES_IN_ATTRIBUTE = 50;

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
   * Change ID: runs from this version on mark Machines (skip-remediation) with a local activity, so
   * no task-queue round trip sits between one node finishing and the next starting. Older runs
   * (recorded before commit dc55ad3 introduced it unversioned) mark with a regular activity.
   */
  static final String LOCAL_MACHINE_MARKS_CHANGE = "parent-local-machine-marks";

  /**
   * Change ID: runs from this version on write their workflow ID as the mark's value and remove only
   * a mark with that value, so a mark an operator set before the run survives it. Older runs wrote
   * an empty value and removed any mark.
   */
  static final String MACHINE_MARK_OWNER_CHANGE = "parent-machine-mark-owner";

  private final ClusterApiActivities localMachineMarks =
      Workflow.newLocalActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.machineMark());
  protected final ClusterApiActivities clusterApi =
      Workflow.newActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.kubeCall());
  protected final NodeActivities nodes =
      Workflow.newActivityStub(NodeActivities.class, ActivityOptionsCatalog.kubeCall());
  protected final HostActivities hosts =
      Workflow.newActivityStub(
          HostActivities.class,
          ActivityOptionsCatalog.hostStep(),
          Map.of(
              "SnapshotEtcd", ActivityOptionsCatalog.etcdSnapshot(),
              "VerifyArtifacts", ActivityOptionsCatalog.artifactFetch()));

  protected final NodeBook book = new NodeBook();
  private final String kind;
  /** Nodes whose thread runs (gate, mark, child, unmark), in start order. */
  private final Set<String> running = new LinkedHashSet<>();
  /** Nodes finished but whose Machine is still being unmarked: the run does not end before them. */
  private final Set<String> unmarking = new LinkedHashSet<>();
  /** Marks Machines: a local activity, or the regular {@link #clusterApi} for older runs; set in begin. */
  private ClusterApiActivities machineMarks;
  /** The value of this run's marks (its workflow ID), or null for runs from before owners; set in begin. */
  private String markOwner;
  private final List<String> warnings = new ArrayList<>();
  private RuntimeException unexpected;
  private int startedThisRun;
  private boolean changed;
  private ClusterRef cluster;
  private NodeUpgradeTemplate template;
  private MaintenanceWindow maintenance;
  private long soakSeconds;
  private boolean looping;
  private boolean stoppingForHistory;
  private long windowOpensAt;
  private long soakingUntil;
  private RunPhase phase = RunPhase.PREFLIGHT;
  private String line = "preflight";
  private String etcdSnapshot;
  private RunPhase publishedPhase;
  private List<String> publishedNodes = List.of();

  protected RollingUpgrade(String kind) {
    this.kind = kind;
  }

  // ---- what the subclasses decide ---------------------------------------------------------------

  /** How many nodes may be in flight at once now. */
  protected abstract int window();

  /** The window as the operator wrote it. */
  protected abstract String maxUnavailable();

  /** Throws {@link IllegalArgumentException} or {@link IllegalStateException} if the new window is refused. */
  protected abstract void checkMaxUnavailable(String value);

  protected abstract String applyMaxUnavailable(String value);

  protected FailurePolicy failurePolicy() {
    return FailurePolicy.HALT;
  }

  protected int maxFailures() {
    return 0;
  }

  /**
   * History events a run may reach before it continues as new; 0 (the default) when it never does.
   * A run stops starting nodes early enough for those in flight to finish within it.
   */
  protected long historyLimit() {
    return 0;
  }

  /**
   * The child request for a node, built in the node's thread just before the child starts. The
   * control plane marks the node that runs {@code kubeadm upgrade apply}.
   */
  protected NodeUpgradeRequest requestFor(MachineInfo machine) {
    return template.forNode(machine.target(cluster));
  }

  /**
   * Runs in the node's thread before anything is changed for it; an {@link ActivityFailure} fails
   * the node with nothing changed (the control-plane health gate).
   */
  protected void beforeNode(MachineInfo machine) {}

  // ---- start, preflight, end --------------------------------------------------------------------

  /**
   * Freezes the run's inputs and makes it findable: cluster, kind, target version, phase. A run
   * {@code resumed} from a continue-as-new goes straight to its node loop, so its phase is the live one.
   */
  protected final void begin(
      ClusterRef cluster, NodeUpgradeTemplate template, MaintenanceWindow maintenance, long soakSeconds,
      boolean resumed) {
    this.looping = resumed;
    this.cluster = cluster;
    this.template = template;
    this.maintenance = maintenance;
    this.soakSeconds = soakSeconds;
    machineMarks =
        Workflow.getVersion(LOCAL_MACHINE_MARKS_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
            ? localMachineMarks
            : clusterApi;
    markOwner = Workflow.getVersion(MACHINE_MARK_OWNER_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
        ? Workflow.getInfo().getWorkflowId()
        : null;
    Workflow.upsertTypedSearchAttributes(
        SearchAttributes.CLUSTER.valueSet(cluster.toString()),
        SearchAttributes.KIND.valueSet(kind),
        SearchAttributes.TARGET_VERSION.valueSet(template.targetVersion()),
        SearchAttributes.PHASE.valueSet(currentPhase().name()));
    publishedPhase = currentPhase();
    Workflow.setCurrentDetails(publishedPhase + ": " + message());
  }

  /** Nodes this run (since the last continue-as-new) has started. */
  protected final int startedThisRun() {
    return startedThisRun;
  }

  protected final ClusterRef cluster() {
    return cluster;
  }

  protected final NodeUpgradeTemplate template() {
    return template;
  }

  protected final String target() {
    return template.targetVersion();
  }

  /**
   * Ends the run as refused before any change: phase FAILED, and the failure to throw. The message
   * says what was refused and why.
   */
  protected final ApplicationFailure refuse(String type, String why) {
    String text = why + "; nothing was changed";
    book.finish();
    phase = RunPhase.FAILED;
    line = "refused (" + type + "): " + text;
    publish();
    log.warn("{} refused: {}", kind, text);
    return UpgradeFailures.nonRetryable(type, text);
  }

  /**
   * A read-only preflight activity: its failure refuses the run with the activity's failure type
   * (or {@code fallbackType} when it has none); a cancellation passes through.
   */
  protected final <T> T preflight(String what, String fallbackType, Supplier<T> call) {
    try {
      return call.get();
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      throw refuse(Failures.typeOf(e, fallbackType), what + " failed: " + Failures.describe(e));
    }
  }

  protected final void warn(String warning) {
    warnings.add(warning);
    log.warn("{}: {}", kind, warning);
  }

  protected final void setPhase(RunPhase newPhase, String newLine) {
    looping = false;
    phase = newPhase;
    line = newLine;
    publish();
  }

  protected final void setEtcdSnapshot(String name) {
    this.etcdSnapshot = name;
  }

  protected final String etcdSnapshot() {
    return etcdSnapshot;
  }

  /** Ends the run: no control is accepted any more. */
  protected final void end(RunPhase terminal, String text) {
    book.finish();
    setPhase(terminal, text);
    log.info("{} ended {}: {}", kind, terminal, text);
  }

  /** The phase a run that finished its node loop ends in. */
  protected final RunPhase outcome() {
    if (book.aborting()) {
      return RunPhase.ABORTED;
    }
    return book.failed() > 0 ? RunPhase.FAILED : RunPhase.SUCCEEDED;
  }

  /**
   * After a cancellation of the run: lets every node in flight finish (their NodeUpgrade children
   * roll back and the Machines are unmarked), detached from the cancellation, then ends as aborted.
   */
  protected final void waitForNodesAfterCancellation() {
    Workflow.newDetachedCancellationScope(
            () -> {
              book.finish();
              setPhase(RunPhase.ABORTING, "cancelled: waiting for nodes in flight to be put back");
              Workflow.await(() -> running.isEmpty() && unmarking.isEmpty());
              setPhase(RunPhase.ABORTED, "cancelled; " + counts());
            })
        .run();
  }

  // ---- the node loop ----------------------------------------------------------------------------

  /** How the node loop ended. */
  protected enum LoopEnd {
    /** Every node resolved, or aborted with nothing in flight. */
    DONE,
    /** History is long: nothing in flight; the caller continues as new. */
    CONTINUE_AS_NEW
  }

  /**
   * Starts nodes while the window, the controls, the failure policy, the maintenance window and the
   * soak allow, and returns when the run is done or should continue as new. With HALT a failure
   * never ends the loop: it waits for retryNode, skipNode or abort.
   */
  protected final LoopEnd upgradeNodes() {
    looping = true;
    while (true) {
      if (unexpected != null) {
        // A bug in a node thread, not a node failure: fail the workflow task so a fixed worker resumes.
        throw unexpected;
      }
      if (book.done(failurePolicy(), maxFailures()) && unmarking.isEmpty()) {
        looping = false;
        return LoopEnd.DONE;
      }
      if (!stoppingForHistory && historyTooLong()) {
        stoppingForHistory = true;
        log.info("history at {} events: no new node starts; continuing as new once {} finish",
            Workflow.getInfo().getHistoryLength(), running);
      }
      if (stoppingForHistory && running.isEmpty() && unmarking.isEmpty()) {
        looping = false;
        return LoopEnd.CONTINUE_AS_NEW;
      }
      windowOpensAt = 0;
      soakingUntil = 0;
      Duration wait = null;
      if (mayStartMore()) {
        long now = Workflow.currentTimeMillis();
        Duration closed = maintenance == null ? Duration.ZERO : maintenance.waitFrom(now);
        long soakEnd = soakSeconds > 0 && book.lastFinishedMillis() > 0
            ? book.lastFinishedMillis() + soakSeconds * 1000
            : 0;
        if (!closed.isZero()) {
          windowOpensAt = now + closed.toMillis();
          wait = closed;
        } else if (soakEnd > now) {
          soakingUntil = soakEnd;
          wait = Duration.ofMillis(soakEnd - now);
        } else {
          startNext(now);
          continue;
        }
      }
      publish();
      changed = false;
      if (wait == null) {
        Workflow.await(() -> changed);
      } else {
        Workflow.await(wait, () -> changed);
      }
    }
  }

  /**
   * Whether to stop starting nodes so the run can continue as new: once the history, plus what the
   * nodes in flight and one more would add, passes the limit (or the server suggests it). Never
   * before this run has started a node, so even a tiny limit makes progress. The limit grows with a
   * wide window (up to {@link #HISTORY_CEILING}) so the history budget never narrows the window.
   */
  private boolean historyTooLong() {
    if (historyLimit() <= 0 || startedThisRun == 0) {
      return false;
    }
    // A window wider than the limit allows is still filled, up to the ceiling.
    long limit = Math.min(HISTORY_CEILING, Math.max(historyLimit(), (long) (window() + 1) * EVENTS_PER_NODE));
    long projected = Workflow.getInfo().getHistoryLength() + (long) (running.size() + 1) * EVENTS_PER_NODE;
    return projected > limit || Workflow.getInfo().isContinueAsNewSuggested();
  }

  private boolean mayStartMore() {
    return !stoppingForHistory
        && !book.aborting()
        && !book.paused()
        && !book.halted(failurePolicy(), maxFailures())
        && book.nextPending().isPresent()
        && running.size() < window();
  }

  private void startNext(long now) {
    String node = book.nextPending().orElseThrow();
    MachineInfo machine = book.machine(node);
    String childId = WorkflowIds.nodeUpgrade(cluster.namespace(), machine.name(), target());
    book.start(now, childId);
    running.add(node);
    startedThisRun++;
    log.info("starting {} ({}): {} in flight", node, childId, running.size());
    Async.procedure(() -> runNode(machine, childId));
  }

  /** One node's thread: gate, mark, child, unmark. Records the outcome in the book. */
  private void runNode(MachineInfo machine, String childId) {
    String node = machine.nodeName();
    try {
      try {
        beforeNode(machine);
      } catch (ActivityFailure e) {
        if (Failures.isCancellation(e)) {
          book.failed(node, now(), NodePhase.FAILED, null, UpgradeFailures.CANCELLED, "cancelled before it started; nothing was changed");
        } else {
          book.failed(node, now(), NodePhase.FAILED, UpgradeStep.PREFLIGHT,
              Failures.typeOf(e, UpgradeFailures.CONTROL_PLANE_UNHEALTHY),
              "health gate before " + node + " failed: " + Failures.describe(e) + "; nothing was changed on " + node);
        }
        return;
      }
      upgradeMarked(machine, childId);
    } catch (CanceledFailure e) {
      // The main thread handles the run's cancellation; this node's outcome is already recorded.
    } catch (RuntimeException e) {
      unexpected = e;
    } finally {
      running.remove(node);
      changed = true;
    }
  }

  private void upgradeMarked(MachineInfo machine, String childId) {
    String node = machine.nodeName();
    try {
      machineMarks.markMachineUpgrading(new MachineMarkRequest(cluster.namespace(), machine.name(), true, markOwner));
      book.note(node, "upgrading: NodeUpgrade " + childId);
      NodeUpgradeResult result = child(machine, childId).upgrade(requestFor(machine));
      book.upgraded(node, now(), result.alreadyAtTarget()
          ? "already at " + result.version()
          : "upgraded " + result.previousVersion() + " -> " + result.version());
      log.info("{} upgraded to {}", node, result.version());
    } catch (ActivityFailure e) {
      if (Failures.isCancellation(e)) {
        book.failed(node, now(), NodePhase.FAILED, null, UpgradeFailures.CANCELLED, "cancelled before it started; nothing was changed");
      } else {
        book.failed(node, now(), NodePhase.FAILED, null, Failures.typeOf(e, UpgradeFailures.KUBERNETES_API_ERROR),
            "could not mark Machine " + machine.name() + " as upgrading: " + Failures.describe(e)
                + "; nothing was changed on " + node);
      }
    } catch (ChildWorkflowFailure e) {
      recordChildFailure(node, childId, e);
    } catch (CanceledFailure e) {
      book.failed(node, now(), NodePhase.ROLLED_BACK, null, UpgradeFailures.CANCELLED,
          "cancelled with the run; NodeUpgrade " + childId + " puts the node back (see its result)");
    } finally {
      // The node is done: free its window slot now, so the next node starts while this Machine is
      // unmarked, instead of one activity round trip later.
      running.remove(node);
      unmarking.add(node);
      changed = true;
      try {
        unmark(machine);
      } finally {
        unmarking.remove(node);
        changed = true;
      }
    }
  }

  /** Removes the skip-remediation mark: after success, failure or cancellation alike. */
  private void unmark(MachineInfo machine) {
    try {
      Workflow.newDetachedCancellationScope(
              () -> machineMarks.markMachineUpgrading(new MachineMarkRequest(cluster.namespace(), machine.name(), false, markOwner)))
          .run();
    } catch (ActivityFailure e) {
      String warning = "could not remove " + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION + " from Machine "
          + machine.name() + ": " + Failures.describe(e);
      book.warn(machine.nodeName(), warning);
      warn(warning);
    }
  }

  private void recordChildFailure(String node, String childId, ChildWorkflowFailure e) {
    Throwable cause = e.getCause();
    long now = now();
    if (cause instanceof ApplicationFailure app) {
      NodeFailure failure = nodeFailure(app);
      if (failure != null) {
        NodePhase phase = failure.phase() == null ? NodePhase.FAILED : failure.phase();
        book.failed(node, now, phase, failure.failedStep(), failure.reason(), failure.message());
      } else {
        book.failed(node, now, NodePhase.FAILED, null, app.getType(), app.getOriginalMessage());
      }
    } else if (cause instanceof CanceledFailure) {
      book.failed(node, now, NodePhase.ROLLED_BACK, null, UpgradeFailures.CANCELLED,
          "NodeUpgrade " + childId + " was cancelled and puts the node back (see its result)");
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

  private static NodeFailure nodeFailure(ApplicationFailure failure) {
    if (failure.getDetails() == null || failure.getDetails().getSize() == 0) {
      return null;
    }
    try {
      return failure.getDetails().get(NodeFailure.class);
    } catch (DataConverterException e) {
      return null;
    }
  }

  private NodeUpgradeWorkflow child(MachineInfo machine, String childId) {
    io.temporal.common.SearchAttributes attributes =
        io.temporal.common.SearchAttributes.newBuilder()
            .set(SearchAttributes.CLUSTER, cluster.toString())
            .set(SearchAttributes.KIND, SearchAttributes.KIND_NODE)
            .set(SearchAttributes.TARGET_VERSION, target())
            .set(SearchAttributes.NODE, List.of(machine.nodeName()))
            .set(SearchAttributes.PHASE, RunPhase.UPGRADING.name())
            .build();
    ChildWorkflowOptions options =
        ChildWorkflowOptions.newBuilder()
            .setWorkflowId(childId)
            // A retry after a failure reuses the ID; a node upgraded once is never upgraded again.
            .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY)
            // Cancelling or terminating the parent lets each child compensate.
            .setParentClosePolicy(ParentClosePolicy.PARENT_CLOSE_POLICY_REQUEST_CANCEL)
            .setTypedSearchAttributes(attributes)
            .setStaticSummary("Upgrade " + machine.nodeName() + " (" + machine.name() + ") to " + target())
            .build();
    return Workflow.newChildWorkflowStub(NodeUpgradeWorkflow.class, options);
  }

  private static long now() {
    return Workflow.currentTimeMillis();
  }

  // ---- status, search attributes, progress ------------------------------------------------------

  /** Upserts the phase and the nodes in flight when they change, and refreshes the UI's one-line status. */
  protected final void publish() {
    RunPhase now = currentPhase();
    if (now != publishedPhase) {
      Workflow.upsertTypedSearchAttributes(SearchAttributes.PHASE.valueSet(now.name()));
      publishedPhase = now;
    }
    List<String> inFlight = book.inFlight();
    List<String> listed = inFlight.size() > NODES_IN_ATTRIBUTE ? inFlight.subList(0, NODES_IN_ATTRIBUTE) : inFlight;
    if (!listed.equals(publishedNodes)) {
      Workflow.upsertTypedSearchAttributes(
          listed.isEmpty() ? SearchAttributes.NODE.valueUnset() : SearchAttributes.NODE.valueSet(List.copyOf(listed)));
      publishedNodes = List.copyOf(listed);
    }
    Workflow.setCurrentDetails(now + ": " + message());
  }

  private RunPhase currentPhase() {
    if (!looping) {
      return phase;
    }
    if (book.aborting()) {
      return RunPhase.ABORTING;
    }
    if (book.halted(failurePolicy(), maxFailures())) {
      return RunPhase.HALTED;
    }
    if (book.paused()) {
      return RunPhase.PAUSED;
    }
    if (windowOpensAt > 0 && running.isEmpty()) {
      return RunPhase.WAITING_FOR_WINDOW;
    }
    return RunPhase.UPGRADING;
  }

  private String currentLine() {
    if (!looping) {
      return line;
    }
    List<String> inFlight = book.inFlight();
    String flying = inFlight.isEmpty() ? "" : "; in flight: " + ClusterPreflight.list(inFlight);
    return switch (currentPhase()) {
      case ABORTING -> "aborting: no new node starts" + flying;
      case HALTED -> halted() + flying;
      case PAUSED -> "paused: " + book.pending() + " node(s) wait to start; " + counts() + flying;
      case WAITING_FOR_WINDOW ->
          "waiting for the maintenance window, opens at " + Instant.ofEpochMilli(windowOpensAt) + "; " + counts();
      default -> {
        String text = counts() + flying;
        if (soakingUntil > 0) {
          text += "; soaking until " + Instant.ofEpochMilli(soakingUntil);
        }
        if (windowOpensAt > 0) {
          text += "; maintenance window closed, next start at " + Instant.ofEpochMilli(windowOpensAt);
        }
        if (stoppingForHistory) {
          text += "; continuing as new once nodes in flight finish";
        }
        yield text;
      }
    };
  }

  private String halted() {
    List<NodeStatus> failures = book.failures();
    NodeStatus first = failures.get(0);
    String more = failures.size() > 1 ? " (and " + (failures.size() - 1) + " more failed)" : "";
    return "halted: " + first.node() + " failed" + (first.step() == null ? "" : " at " + first.step().cliName())
        + " (" + first.reason() + "): " + first.message() + more + "; use retryNode, skipNode or abort";
  }

  protected final String counts() {
    return book.upgraded() + "/" + book.total() + " upgraded, " + book.failed() + " failed, "
        + book.skipped() + " skipped";
  }

  protected final String message() {
    String text = currentLine();
    return warnings.isEmpty() ? text : text + "; warning: " + String.join("; ", warnings);
  }

  public UpgradeProgress progress() {
    return new UpgradeProgress(
        kind,
        cluster,
        template == null ? null : template.targetVersion(),
        currentPhase(),
        message(),
        book.paused(),
        maxUnavailable(),
        window(),
        book.total(),
        book.upgraded(),
        book.failed(),
        book.skipped(),
        book.inFlight().size(),
        etcdSnapshot,
        book.statuses());
  }

  // ---- operator controls (UpgradeControls) ------------------------------------------------------

  public String pause() {
    return control(book::checkPause, book::pause);
  }

  public void validatePause() {
    book.checkPause();
  }

  public String resume() {
    return control(book::checkResume, book::resume);
  }

  public void validateResume() {
    book.checkResume();
  }

  public String abort() {
    return control(book::checkAbort, book::abort);
  }

  public void validateAbort() {
    book.checkAbort();
  }

  public String setMaxUnavailable(String value) {
    return control(() -> checkMaxUnavailable(value), () -> applyMaxUnavailable(value));
  }

  public void validateSetMaxUnavailable(String value) {
    checkMaxUnavailable(value);
  }

  public String retryNode(String node) {
    return control(() -> book.checkRetry(node), () -> book.retry(node));
  }

  public void validateRetryNode(String node) {
    book.checkRetry(node);
  }

  public String skipNode(String node) {
    return control(() -> book.checkSkip(node), () -> book.skip(node));
  }

  public void validateSkipNode(String node) {
    book.checkSkip(node);
  }

  /**
   * Applies a control. The validator has already accepted it; the check is repeated because state may
   * have moved since, and a refusal here must fail only the update (an ApplicationFailure), never
   * the workflow task.
   */
  private String control(Runnable check, Supplier<String> action) {
    try {
      check.run();
    } catch (IllegalArgumentException | IllegalStateException e) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, e.getMessage());
    }
    String result = action.get();
    log.info("{} control: {}", kind, result);
    changed = true;
    return result;
  }
}
