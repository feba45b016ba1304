package dev.inplace.worker.watch;

import dev.inplace.worker.crd.NodeRecord;
import dev.inplace.worker.crd.RunHistoryEntry;
import dev.inplace.worker.crd.RunRecord;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradeCounts;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradePlan;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Set;
import java.util.function.Predicate;

/**
 * Builds a CR's next status from what was observed and the status it has, so conditions keep their
 * transition times and a run that could not be asked keeps its last known rows.
 */
final class StatusBuilder {
  private static final Set<String> FAILED_NODE = Set.of("Failed", "RolledBack", "RollbackFailed");
  private static final Set<String> IN_FLIGHT = Set.of("Upgrading", "RollingBack");

  private final long generation;
  private final String now;
  /** The CR's spec.version: a run's target when it could not be asked. */
  private final String version;

  StatusBuilder(long generation, String now, String version) {
    this.generation = generation;
    this.now = now;
    this.version = version;
  }

  /** Refused before anything was touched. */
  UpgradeStatus refused(UpgradeStatus previous, SpecRefusal refusal) {
    UpgradeStatus next = base(previous).setPhase(UpgradePhase.FAILED).setMessage(Texts.clip(refusal.getMessage()));
    next.setPlan(null);
    String message = "refused, nothing was changed: " + refusal.getMessage();
    Conditions.set(next, previous, UpgradeCondition.READY, false, refusal.reason(), message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.PROGRESSING, false, refusal.reason(), message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.FAILED, true, refusal.reason(), message, generation, now);
    return next;
  }

  /** Not decided yet: a transient problem, or the spec was only just seen. */
  UpgradeStatus pending(UpgradeStatus previous, String message) {
    UpgradeStatus next = base(previous).setPhase(UpgradePhase.PENDING).setMessage(Texts.clip(message));
    Conditions.set(next, previous, UpgradeCondition.READY, false, Reasons.PENDING, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.PROGRESSING, false, Reasons.PENDING, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "", generation, now);
    return next;
  }

  UpgradeStatus planned(UpgradeStatus previous, UpgradePlan plan) {
    UpgradeStatus next = base(previous).setPhase(UpgradePhase.PLANNED).setMessage(Texts.clip(plan.getSummary()));
    next.setPlan(plan);
    String message = "dry run: status.plan holds the plan; nothing was started or changed";
    Conditions.set(next, previous, UpgradeCondition.READY, false, Reasons.PLANNED, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.PROGRESSING, false, Reasons.PLANNED, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "", generation, now);
    return next;
  }

  UpgradeStatus waiting(UpgradeStatus previous, String message) {
    UpgradeStatus next = base(previous).setPhase(UpgradePhase.WAITING).setMessage(Texts.clip(message));
    next.setPlan(null);
    Conditions.set(next, previous, UpgradeCondition.READY, false, Reasons.WAITING_FOR_CONTROL_PLANE, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.PROGRESSING, true, Reasons.WAITING_FOR_CONTROL_PLANE, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "", generation, now);
    return next;
  }

  /** The runs were just started (or found started): the spec is frozen from here on. */
  UpgradeStatus started(
      UpgradeStatus previous, List<RunRecord> runs, long frozenGeneration, String specHash, String message) {
    UpgradeStatus next = base(previous).setPhase(UpgradePhase.RUNNING).setMessage(Texts.clip(message));
    next.setPlan(null);
    next.setWorkflowIds(runs.stream().map(RunRecord::getWorkflowId).toList());
    next.setRuns(runs);
    next.setFrozenGeneration(frozenGeneration);
    next.setSpecHash(specHash);
    next.setStartTime(previous != null && previous.getStartTime() != null ? previous.getStartTime() : now);
    Conditions.set(next, previous, UpgradeCondition.READY, false, Reasons.STARTED, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.PROGRESSING, true, Reasons.STARTED, message, generation, now);
    Conditions.set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "", generation, now);
    Conditions.set(next, previous, UpgradeCondition.PAUSED, false, Reasons.NOT_PAUSED, "", generation, now);
    Conditions.set(next, previous, UpgradeCondition.SPEC_ACCEPTED, true, Reasons.SPEC_FROZEN,
        "the run's target is the spec of generation " + frozenGeneration, generation, now);
    return next;
  }

  /** The run skips the drain because the cluster has a single node: said in a condition, with why. */
  UpgradeStatus drainSkipped(UpgradeStatus next, UpgradeStatus previous, String node) {
    Conditions.set(next, previous, UpgradeCondition.DRAIN_SKIPPED, true, Reasons.SINGLE_NODE_CLUSTER,
        "the cluster has one node (" + node + "): there is nowhere to evict its pods to, so it is cordoned but not"
            + " drained; its pods restart with it", generation, now);
    return next;
  }

  /**
   * A started CR's status from its runs.
   *
   * @param specAccepted false when the spec now differs from the frozen one (besides paused)
   * @param deleting the CR is being deleted: its runs were told to abort
   */
  UpgradeStatus mirrored(
      UpgradeStatus previous, List<RunObservation> observations, boolean specAccepted, boolean deleting) {
    UpgradeStatus next = base(previous);
    List<NodeRecord> rows = new ArrayList<>();
    List<RunRecord> runs = new ArrayList<>();
    String snapshot = previous.getEtcdSnapshot();
    boolean paused = false;
    for (RunObservation o : observations) {
      RunRecord before = previousRun(previous, o.workflowId());
      RunRecord run = new RunRecord(o.workflowId(), o.machineDeployment())
          .setFromVersion(before == null ? null : before.getFromVersion());
      UpgradeProgress p = o.progress();
      if (p != null) {
        p.nodes().forEach(n -> rows.add(row(n, o)));
        if (p.etcdSnapshot() != null) {
          snapshot = p.etcdSnapshot();
        }
        paused |= !o.closed() && p.paused();
        run.setPhase(Texts.camel(p.phase())).setMessage(Texts.clip(p.message()));
      } else {
        rows.addAll(previousRows(previous, o.machineDeployment()));
        if (before != null) {
          run.setPhase(before.getPhase()).setMessage(before.getMessage());
        }
      }
      if (o.state() == RunObservation.State.FAILED || o.state() == RunObservation.State.TERMINATED
          || o.state() == RunObservation.State.TIMED_OUT) {
        run.setPhase(Texts.camel(RunPhase.FAILED)).setReason(o.failureType()).setMessage(Texts.clip(o.failureMessage()));
      } else if (o.state() == RunObservation.State.CANCELED) {
        run.setPhase(Texts.camel(RunPhase.ABORTED)).setReason(o.failureType()).setMessage(Texts.clip(o.failureMessage()));
      } else if (o.state() == RunObservation.State.NOT_FOUND) {
        run.setPhase(Texts.camel(RunPhase.FAILED)).setReason(Reasons.RUN_NOT_FOUND)
            .setMessage("Temporal has no run " + o.workflowId() + " (deleted, or lost with an embedded server); "
                + "delete this resource and create it again to start a new run");
      } else if (o.state() == RunObservation.State.COMPLETED && run.getPhase() == null) {
        run.setPhase(Texts.camel(RunPhase.SUCCEEDED));
      }
      runs.add(run);
    }
    for (int i = 0; i < observations.size(); i++) {
      RunObservation o = observations.get(i);
      if (o.closed()) {
        next.setHistory(RunHistoryEntry.append(next.getHistory(), historyEntry(o, runs.get(i), rows, previous)));
      }
    }
    next.setNodes(rows);
    next.setRuns(runs);
    next.setEtcdSnapshot(snapshot);
    int upgraded = count(rows, r -> "Upgraded".equals(r.getPhase()));
    next.setCounts(
        new UpgradeCounts(
            rows.size(),
            upgraded,
            count(rows, r -> FAILED_NODE.contains(r.getPhase())),
            count(rows, r -> "Skipped".equals(r.getPhase())),
            count(rows, r -> IN_FLIGHT.contains(r.getPhase()))));
    next.setProgress(upgraded + "/" + rows.size());

    boolean allClosed = observations.stream().allMatch(RunObservation::closed);
    UpgradePhase phase = allClosed ? ended(runs) : active(observations, runs, deleting);
    next.setPhase(phase);
    next.setMessage(Texts.clip(message(runs)));
    if (allClosed && next.getCompletionTime() == null) {
      next.setCompletionTime(now);
    }
    setConditions(next, previous, phase, rows, runs, paused, specAccepted);
    return next;
  }

  private void setConditions(
      UpgradeStatus next,
      UpgradeStatus previous,
      UpgradePhase phase,
      List<NodeRecord> rows,
      List<RunRecord> runs,
      boolean paused,
      boolean specAccepted) {
    String message = next.getMessage();
    String failure = failureReason(rows, runs);
    switch (phase) {
      case SUCCEEDED -> {
        set(next, previous, UpgradeCondition.READY, true, Reasons.SUCCEEDED, message);
        set(next, previous, UpgradeCondition.PROGRESSING, false, Reasons.SUCCEEDED, message);
        set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "");
      }
      case FAILED -> {
        set(next, previous, UpgradeCondition.READY, false, failure, message);
        set(next, previous, UpgradeCondition.PROGRESSING, false, failure, message);
        set(next, previous, UpgradeCondition.FAILED, true, failure, message);
      }
      case ABORTED -> {
        set(next, previous, UpgradeCondition.READY, false, Reasons.ABORTED, message);
        set(next, previous, UpgradeCondition.PROGRESSING, false, Reasons.ABORTED, message);
        set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "");
      }
      case HALTED -> {
        set(next, previous, UpgradeCondition.READY, false, Reasons.HALTED, message);
        set(next, previous, UpgradeCondition.PROGRESSING, false, Reasons.HALTED, message);
        set(next, previous, UpgradeCondition.FAILED, true, failure, message);
      }
      case PAUSED -> {
        set(next, previous, UpgradeCondition.READY, false, Reasons.PAUSED, message);
        set(next, previous, UpgradeCondition.PROGRESSING, false, Reasons.PAUSED, message);
        set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "");
      }
      case ABORTING -> {
        set(next, previous, UpgradeCondition.READY, false, Reasons.ABORTING, message);
        set(next, previous, UpgradeCondition.PROGRESSING, true, Reasons.ABORTING, message);
        set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "");
      }
      default -> {
        set(next, previous, UpgradeCondition.READY, false, Reasons.UPGRADING, message);
        set(next, previous, UpgradeCondition.PROGRESSING, true, Reasons.UPGRADING, message);
        set(next, previous, UpgradeCondition.FAILED, false, Reasons.NO_FAILURE, "");
      }
    }
    set(next, previous, UpgradeCondition.PAUSED, paused, paused ? Reasons.PAUSED : Reasons.NOT_PAUSED,
        paused ? "no new node starts; set spec.paused to false to resume" : "");
    if (specAccepted) {
      set(next, previous, UpgradeCondition.SPEC_ACCEPTED, true, Reasons.SPEC_FROZEN,
          "the run's target is the spec of generation " + next.getFrozenGeneration());
    } else {
      set(next, previous, UpgradeCondition.SPEC_ACCEPTED, false, Reasons.SPEC_CHANGE_REFUSED,
          "the spec changed after the run started; only spec.paused may change: the run keeps the spec of generation "
              + next.getFrozenGeneration() + " (revert the change, or delete this resource and create a new one)");
    }
  }

  private void set(UpgradeStatus next, UpgradeStatus previous, String type, boolean value, String reason, String message) {
    Conditions.set(next, previous, type, value, reason, message, generation, now);
  }

  private static UpgradePhase ended(List<RunRecord> runs) {
    if (runs.stream().anyMatch(r -> "Failed".equals(r.getPhase()))) {
      return UpgradePhase.FAILED;
    }
    if (runs.stream().anyMatch(r -> "Aborted".equals(r.getPhase()))) {
      return UpgradePhase.ABORTED;
    }
    return UpgradePhase.SUCCEEDED;
  }

  private static UpgradePhase active(List<RunObservation> observations, List<RunRecord> runs, boolean deleting) {
    if (deleting) {
      return UpgradePhase.ABORTING;
    }
    List<String> live = new ArrayList<>();
    for (int i = 0; i < observations.size(); i++) {
      if (!observations.get(i).closed()) {
        live.add(runs.get(i).getPhase());
      }
    }
    if (live.contains(Texts.camel(RunPhase.HALTED))) {
      return UpgradePhase.HALTED;
    }
    if (live.contains(Texts.camel(RunPhase.ABORTING))) {
      return UpgradePhase.ABORTING;
    }
    if (!live.isEmpty() && live.stream().allMatch(p -> Texts.camel(RunPhase.PAUSED).equals(p))) {
      return UpgradePhase.PAUSED;
    }
    return UpgradePhase.RUNNING;
  }

  /** The reason a failed or halted CR shows: the run's failure type, else the first failed node's. */
  private static String failureReason(List<NodeRecord> rows, List<RunRecord> runs) {
    for (RunRecord r : runs) {
      if (r.getReason() != null) {
        return r.getReason();
      }
    }
    for (NodeRecord n : rows) {
      if (FAILED_NODE.contains(n.getPhase()) && n.getReason() != null) {
        return n.getReason();
      }
    }
    return UpgradeFailures.NODE_UPGRADE_FAILED;
  }

  private static String message(List<RunRecord> runs) {
    if (runs.size() == 1) {
      return Objects.requireNonNullElse(runs.get(0).getMessage(), "");
    }
    List<String> parts = new ArrayList<>();
    for (RunRecord r : runs) {
      parts.add(r.getMachineDeployment() + ": " + (r.getMessage() == null ? Objects.requireNonNullElse(r.getPhase(), "starting") : r.getMessage()));
    }
    return String.join("; ", parts);
  }

  /** The record of a run that has ended, for status.history. */
  private RunHistoryEntry historyEntry(RunObservation o, RunRecord run, List<NodeRecord> rows, UpgradeStatus previous) {
    List<NodeRecord> mine = rows.stream().filter(r -> Objects.equals(r.getPool(), o.machineDeployment())).toList();
    String started = o.startMillis() > 0 ? Texts.time(o.startMillis()) : previous.getStartTime();
    String finished = o.closeMillis() > 0 ? Texts.time(o.closeMillis()) : now;
    return new RunHistoryEntry()
        .setWorkflowId(o.workflowId())
        .setMachineDeployment(o.machineDeployment())
        .setFromVersion(run.getFromVersion())
        .setToVersion(o.progress() == null || blankToNull(o.progress().targetVersion()) == null
            ? version : o.progress().targetVersion())
        .setStarted(started)
        .setFinished(finished)
        .setResult(run.getPhase())
        .setReason(run.getReason())
        .setMessage(run.getMessage())
        .setTotal(mine.size())
        .setUpgraded(count(mine, r -> "Upgraded".equals(r.getPhase())))
        .setFailed(count(mine, r -> FAILED_NODE.contains(r.getPhase())))
        .setSkipped(count(mine, r -> "Skipped".equals(r.getPhase())));
  }

  private static NodeRecord row(NodeStatus n, RunObservation o) {
    UpgradeStep inFlight = o.steps().get(n.node());
    UpgradeStep step = inFlight != null ? inFlight : n.step();
    return new NodeRecord()
        .setMachine(n.machine())
        .setNode(n.node())
        .setRole(Texts.camel(n.role()))
        .setPool(o.machineDeployment())
        .setPhase(Texts.camel(n.phase()))
        .setStep(step == null ? null : step.cliName())
        .setStarted(Texts.time(n.startedMillis()))
        .setFinished(Texts.time(n.finishedMillis()))
        .setReason(blankToNull(n.reason()))
        .setMessage(Texts.clip(blankToNull(n.message())))
        .setWorkflowId(blankToNull(n.workflowId()));
  }

  private static List<NodeRecord> previousRows(UpgradeStatus previous, String pool) {
    if (previous.getNodes() == null) {
      return List.of();
    }
    return previous.getNodes().stream().filter(r -> Objects.equals(r.getPool(), pool)).toList();
  }

  private static RunRecord previousRun(UpgradeStatus previous, String workflowId) {
    if (previous.getRuns() == null) {
      return null;
    }
    return previous.getRuns().stream().filter(r -> workflowId.equals(r.getWorkflowId())).findFirst().orElse(null);
  }

  private static int count(List<NodeRecord> rows, Predicate<NodeRecord> which) {
    return (int) rows.stream().filter(which).count();
  }

  private static String blankToNull(String text) {
    return text == null || text.isEmpty() ? null : text;
  }

  /** A copy of {@code previous} (or a new status) with this generation observed. */
  private UpgradeStatus base(UpgradeStatus previous) {
    UpgradeStatus next = previous == null ? new UpgradeStatus() : copy(previous);
    next.setObservedGeneration(generation);
    return next;
  }

  static UpgradeStatus copy(UpgradeStatus status) {
    return io.fabric8.kubernetes.client.utils.Serialization.jsonMapper().convertValue(status, UpgradeStatus.class);
  }
}
