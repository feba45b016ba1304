package dev.inplace.worker.watch;

import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeStep;
import java.util.Map;

/**
 * What one run looked like when observed.
 *
 * @param state the workflow execution's state
 * @param progress its progress query, or null when it could not be asked
 * @param failureType for a run that ended in failure: the failure type (the condition reason)
 * @param failureMessage and its message
 * @param steps the step in flight of each node being upgraded or rolled back, by node name
 * @param startMillis when the run started (epoch millis; 0 unknown)
 * @param closeMillis when it ended (0: not ended, or unknown)
 */
record RunObservation(
    String workflowId,
    String machineDeployment,
    State state,
    UpgradeProgress progress,
    String failureType,
    String failureMessage,
    Map<String, UpgradeStep> steps,
    long startMillis,
    long closeMillis) {

  enum State {
    RUNNING,
    COMPLETED,
    FAILED,
    CANCELED,
    TERMINATED,
    TIMED_OUT,
    /** Temporal has no run under that ID (deleted, or lost with an embedded server). */
    NOT_FOUND,
    /** Temporal could not be asked; the status keeps what it had. */
    UNKNOWN;

    boolean closed() {
      return this != RUNNING && this != UNKNOWN;
    }
  }

  boolean closed() {
    return state.closed();
  }
}
