package dev.inplace.worker.observe;

import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.StepStatus;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;

/** What a finished NodeUpgrade run counts as, and how long each of its steps took. */
record NodeOutcome(String result, List<StepRecord> steps) {
  static final String UPGRADED = "upgraded";
  static final String FAILED = "failed";
  static final String ROLLED_BACK = "rolled_back";
  static final String SKIPPED = "skipped";

  static NodeOutcome of(NodeUpgradeResult result) {
    return new NodeOutcome(result.alreadyAtTarget() ? SKIPPED : UPGRADED, result.steps());
  }

  /** A failed run; {@code details} is absent when the failure carried none (cancelled, timed out). */
  static NodeOutcome of(Optional<NodeFailure> details) {
    return details
        .map(d -> new NodeOutcome(d.phase() == NodePhase.ROLLED_BACK ? ROLLED_BACK : FAILED, d.steps()))
        .orElse(new NodeOutcome(FAILED, List.of()));
  }

  /** How long a step that ran to its end took (workflow time, so the same on every replay). */
  static Optional<Duration> duration(StepRecord step) {
    if (step.status() == StepStatus.SKIPPED || step.status() == StepStatus.RUNNING || step.startedMillis() <= 0 || step.finishedMillis() < step.startedMillis()) {
      return Optional.empty();
    }
    return Optional.of(Duration.ofMillis(step.finishedMillis() - step.startedMillis()));
  }

  static String label(Enum<?> value) {
    return value.name().toLowerCase(Locale.ROOT);
  }
}
