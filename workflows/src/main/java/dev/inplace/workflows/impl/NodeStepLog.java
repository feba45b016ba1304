package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import io.temporal.common.SearchAttributeUpdate;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * What a NodeUpgrade run shows of itself: its step records, phase and last message, read by the
 * progress query, written to the run's current details in the Temporal UI, and (from
 * node-upgrade-search-attributes on) the phase upserted as a search attribute.
 */
final class NodeStepLog {
  private static final Logger log = Workflow.getLogger(NodeUpgradeWorkflowImpl.class);

  private final List<StepRecord> steps = new ArrayList<>();
  private String machineName = "";
  private String nodeName = "";
  private NodePhase phase = NodePhase.PENDING;
  private UpgradeStep currentStep;
  private String message = "";
  private boolean upsertPhase;
  private boolean upsertOnlyChanges;

  void identify(String machine, String node) {
    machineName = machine;
    nodeName = node;
  }

  /**
   * Whether each phase change is upserted as the InplacePhase search attribute; with {@code
   * onlyChanges}, not when the run already carries that phase (a child starts with {@code UPGRADING}).
   */
  void upsertPhase(boolean upsert, boolean onlyChanges) {
    upsertPhase = upsert;
    upsertOnlyChanges = onlyChanges;
  }

  String machineName() {
    return machineName;
  }

  String nodeName() {
    return nodeName;
  }

  UpgradeStep currentStep() {
    return currentStep;
  }

  String message() {
    return message;
  }

  /** Replaces the message without publishing it; {@link #publishDetails} or the next change does. */
  void message(String text) {
    message = text;
  }

  List<StepRecord> steps() {
    return List.copyOf(steps);
  }

  NodeProgress progress() {
    return new NodeProgress(machineName, nodeName, phase, currentStep, List.copyOf(steps), message);
  }

  void setPhase(NodePhase next) {
    phase = next;
    if (upsertPhase) {
      SearchAttributeUpdate<String> update = RunSearchAttributes.PHASE.valueSet(next.name());
      if (!upsertOnlyChanges || !SearchAttributeChanges.of(List.of(update)).isEmpty()) {
        Workflow.upsertTypedSearchAttributes(update);
      }
    }
    publishDetails();
  }

  /** Runs one step: recorded as running, then done with the summary of its result. */
  <T> T step(UpgradeStep step, Supplier<T> action, Function<T, String> summary) {
    begin(step);
    T result = action.get();
    finish(step, StepStatus.DONE, summary.apply(result));
    return result;
  }

  void begin(UpgradeStep step) {
    currentStep = step;
    steps.add(new StepRecord(step, StepStatus.RUNNING, Workflow.currentTimeMillis(), 0, ""));
    publishDetails();
  }

  void finish(UpgradeStep step, StepStatus status, String text) {
    int i = lastIndexOf(step);
    StepRecord started = steps.get(i);
    steps.set(i, new StepRecord(step, status, started.startedMillis(), Workflow.currentTimeMillis(), text));
    message = step.cliName() + ": " + text;
    publishDetails();
  }

  /** Marks the step failed; a step that is not running (a refusal before it began) is begun first. */
  void markFailed(UpgradeStep step, String text) {
    int i = lastIndexOf(step);
    if (i < 0 || steps.get(i).status() != StepStatus.RUNNING) {
      begin(step);
      i = lastIndexOf(step);
    }
    StepRecord started = steps.get(i);
    steps.set(i, new StepRecord(step, StepStatus.FAILED, started.startedMillis(), Workflow.currentTimeMillis(), text));
    publishDetails();
  }

  /** Ends the run in {@code endPhase} and builds the failure it ends with, carrying the steps. */
  ApplicationFailure fail(UpgradeStep failedStep, String reason, String text, NodePhase endPhase, String versionNow) {
    setPhase(endPhase);
    message = text;
    publishDetails();
    log.warn("node {}: {}", nodeName, text);
    NodeFailure details =
        new NodeFailure(machineName, nodeName, failedStep, reason, text, endPhase, versionNow, List.copyOf(steps));
    return UpgradeFailures.nonRetryable(reason, text, details);
  }

  /** The run's current details in the Temporal UI: node, phase, step and the last message. */
  void publishDetails() {
    Workflow.setCurrentDetails("node " + nodeName + " (Machine " + machineName + "); " + phase
        + (currentStep == null ? "" : "; step " + currentStep.cliName())
        + (message == null || message.isEmpty() ? "" : "; " + message));
  }

  private int lastIndexOf(UpgradeStep step) {
    for (int i = steps.size() - 1; i >= 0; i--) {
      if (steps.get(i).step() == step) {
        return i;
      }
    }
    return -1;
  }
}
