package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.workflow.Workflow;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * A parent run's phase and one-line status as the Temporal UI and the {@code progress} query show
 * them, and the search attributes that make the run findable: cluster, kind, target, phase and the
 * nodes in flight. While the node loop runs, the phase follows the book (halted, paused, waiting
 * for the maintenance window); before and after it, the run sets it.
 */
final class RunStatus {
  private static final Logger log = Workflow.getLogger(RunStatus.class);

  /** At most this many node names go into the InplaceNode search attribute (visibility limits its size). */
  static final int NODES_IN_ATTRIBUTE = 50;

  private final String kind;
  private final NodeBook book;
  private final RunRules rules;
  private final NodeThreads threads;
  private final List<String> warnings = new ArrayList<>();
  private ClusterRef cluster;
  private NodeUpgradeTemplate template;
  private boolean looping;
  private RunPhase phase = RunPhase.PREFLIGHT;
  private String line = "preflight";
  private String etcdSnapshot;
  private RunPhase publishedPhase;
  private List<String> publishedNodes = List.of();
  /** What the node loop waits for, for the line: the maintenance window, the soak; 0 when nothing. */
  private long windowOpensAt;
  private long soakingUntil;
  private boolean stoppingForHistory;

  RunStatus(String kind, NodeBook book, RunRules rules, NodeThreads threads) {
    this.kind = kind;
    this.book = book;
    this.rules = rules;
    this.threads = threads;
  }

  /**
   * Makes the run findable: cluster, kind, target version, phase. A run {@code resumed} from a
   * continue-as-new goes straight to its node loop, so its phase is the live one.
   */
  void begin(ClusterRef cluster, NodeUpgradeTemplate template, boolean resumed) {
    this.looping = resumed;
    this.cluster = cluster;
    this.template = template;
    Workflow.upsertTypedSearchAttributes(
        RunSearchAttributes.CLUSTER.valueSet(cluster.toString()),
        RunSearchAttributes.KIND.valueSet(kind),
        RunSearchAttributes.TARGET_VERSION.valueSet(template.targetVersion()),
        RunSearchAttributes.PHASE.valueSet(currentPhase().name()));
    publishedPhase = currentPhase();
    Workflow.setCurrentDetails(publishedPhase + ": " + message());
  }

  /**
   * Ends the run as refused before any change: phase FAILED, and the failure to throw. The message
   * says what was refused and why.
   */
  ApplicationFailure refuse(String type, String why) {
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
  <T> T preflight(String what, String fallbackType, Supplier<T> call) {
    try {
      return call.get();
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      throw refuse(Failures.typeOf(e, fallbackType), what + " failed: " + Failures.describe(e));
    }
  }

  /** Budgets that allow no disruption now are a warning, never a refusal; so is failing to list them. */
  void warnAboutBudgets(Supplier<BudgetReport> blockingBudgets) {
    try {
      BudgetReport report = blockingBudgets.get();
      ClusterPreflight.budgetWarning(report.blocking()).ifPresent(this::warn);
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      warn("could not list PodDisruptionBudgets: " + Failures.describe(e));
    }
  }

  void warn(String warning) {
    warnings.add(warning);
    log.warn("{}: {}", kind, warning);
  }

  void setPhase(RunPhase newPhase, String newLine) {
    looping = false;
    phase = newPhase;
    line = newLine;
    publish();
  }

  /** Ends the run: no control is accepted any more. */
  void end(RunPhase terminal, String text) {
    book.finish();
    setPhase(terminal, text);
    log.info("{} ended {}: {}", kind, terminal, text);
  }

  /** The phase a run that finished its node loop ends in. */
  RunPhase outcome() {
    if (book.aborting()) {
      return RunPhase.ABORTED;
    }
    return book.failed() > 0 ? RunPhase.FAILED : RunPhase.SUCCEEDED;
  }

  void setEtcdSnapshot(String name) {
    this.etcdSnapshot = name;
  }

  String etcdSnapshot() {
    return etcdSnapshot;
  }

  // ---- what the node loop tells ----------------------------------------------------------------

  /** The node loop runs: the phase follows the book. */
  void looping(boolean looping) {
    this.looping = looping;
  }

  /** What the loop now waits for before the next start (0: nothing). */
  void waiting(long windowOpensAt, long soakingUntil) {
    this.windowOpensAt = windowOpensAt;
    this.soakingUntil = soakingUntil;
  }

  void stoppingForHistory() {
    stoppingForHistory = true;
  }

  // ---- status, search attributes, progress ------------------------------------------------------

  /** Upserts the phase and the nodes in flight when they change, and refreshes the UI's one-line status. */
  void publish() {
    RunPhase now = currentPhase();
    if (now != publishedPhase) {
      Workflow.upsertTypedSearchAttributes(RunSearchAttributes.PHASE.valueSet(now.name()));
      publishedPhase = now;
    }
    List<String> inFlight = book.inFlight();
    List<String> listed = inFlight.size() > NODES_IN_ATTRIBUTE ? inFlight.subList(0, NODES_IN_ATTRIBUTE) : inFlight;
    if (!listed.equals(publishedNodes)) {
      Workflow.upsertTypedSearchAttributes(
          listed.isEmpty() ? RunSearchAttributes.NODE.valueUnset() : RunSearchAttributes.NODE.valueSet(List.copyOf(listed)));
      publishedNodes = List.copyOf(listed);
    }
    Workflow.setCurrentDetails(now + ": " + message());
  }

  RunPhase currentPhase() {
    if (!looping) {
      return phase;
    }
    if (book.aborting()) {
      return RunPhase.ABORTING;
    }
    if (book.halted(rules.failurePolicy(), rules.maxFailures())) {
      return RunPhase.HALTED;
    }
    if (book.paused()) {
      return RunPhase.PAUSED;
    }
    if (windowOpensAt > 0 && threads.noneRunning()) {
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

  String counts() {
    return book.upgraded() + "/" + book.total() + " upgraded, " + book.failed() + " failed, "
        + book.skipped() + " skipped";
  }

  String message() {
    String text = currentLine();
    return warnings.isEmpty() ? text : text + "; warning: " + String.join("; ", warnings);
  }

  UpgradeProgress progress() {
    return new UpgradeProgress(
        kind,
        cluster,
        template == null ? null : template.targetVersion(),
        currentPhase(),
        message(),
        book.paused(),
        rules.maxUnavailable(),
        rules.window(),
        book.total(),
        book.upgraded(),
        book.failed(),
        book.skipped(),
        book.inFlight().size(),
        etcdSnapshot,
        book.statuses());
  }
}
