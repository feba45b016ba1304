package dev.inplace.worker.watch;

import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.UpdateOptions;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowException;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowStub;
import io.temporal.client.WorkflowUpdateException;
import io.temporal.client.WorkflowUpdateStage;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.TemporalFailure;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Reads a run's state and progress from Temporal, and sends it the operator Updates the CR asks
 * for (pause, resume, abort) or cancels it. Each Update carries an ID derived from why it is sent,
 * so sending it again (after a restart of the watcher) is harmless.
 */
final class RunObserver {
  private static final Logger log = LoggerFactory.getLogger(RunObserver.class);
  private static final long UPDATE_TIMEOUT_SECONDS = 10;

  private final WorkflowClient client;

  RunObserver(WorkflowClient client) {
    this.client = client;
  }

  RunObservation observe(String workflowId, String machineDeployment) {
    WorkflowStub stub = client.newUntypedWorkflowStub(workflowId);
    RunObservation.State state;
    long startMillis;
    long closeMillis;
    try {
      WorkflowExecutionDescription description = stub.describe();
      state = state(description.getStatus());
      startMillis = millis(description.getStartTime());
      closeMillis = millis(description.getCloseTime());
    } catch (WorkflowNotFoundException e) {
      return without(workflowId, machineDeployment, RunObservation.State.NOT_FOUND);
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return without(workflowId, machineDeployment, RunObservation.State.NOT_FOUND);
      }
      log.warn("cannot describe {}: {}", workflowId, e.getStatus());
      return without(workflowId, machineDeployment, RunObservation.State.UNKNOWN);
    }
    UpgradeProgress progress = query(stub, workflowId);
    String failureType = null;
    String failureMessage = null;
    if (state == RunObservation.State.FAILED || state == RunObservation.State.CANCELED
        || state == RunObservation.State.TERMINATED || state == RunObservation.State.TIMED_OUT) {
      Failure failure = failure(stub, state);
      failureType = failure.type();
      failureMessage = failure.message();
    }
    Map<String, UpgradeStep> steps = progress == null ? Map.of() : steps(progress);
    return new RunObservation(
        workflowId, machineDeployment, state, progress, failureType, failureMessage, steps, startMillis, closeMillis);
  }

  /** The memo the run was started with (spec hash, generation), when the run exists. */
  Optional<WorkflowExecutionDescription> describe(String workflowId) {
    try {
      return Optional.of(client.newUntypedWorkflowStub(workflowId).describe());
    } catch (WorkflowNotFoundException | StatusRuntimeException e) {
      return Optional.empty();
    }
  }

  /**
   * Sends an Update; returns true when the run took it or already was where it leads (the
   * validator refused it, e.g. "already paused"), false when it could not be delivered now.
   */
  boolean update(String workflowId, String updateName, String updateId) {
    WorkflowStub stub = client.newUntypedWorkflowStub(workflowId);
    try {
      stub.startUpdate(
              UpdateOptions.newBuilder(String.class)
                  .setUpdateName(updateName)
                  .setUpdateId(updateId)
                  .setWaitForStage(WorkflowUpdateStage.COMPLETED)
                  .build())
          .getResult(UPDATE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
      log.info("{}: {} accepted", workflowId, updateName);
      return true;
    } catch (WorkflowUpdateException e) {
      log.info("{}: {} refused: {}", workflowId, updateName, rootMessage(e));
      return true;
    } catch (WorkflowNotFoundException e) {
      return true; // nothing left to control
    } catch (RuntimeException e) {
      log.warn("{}: {} not delivered, will try again: {}", workflowId, updateName, rootMessage(e));
      return false;
    }
  }

  /** Requests cancellation: the run puts its nodes in flight back, then ends cancelled. */
  void cancel(String workflowId) {
    try {
      client.newUntypedWorkflowStub(workflowId).cancel("custom resource deleted and abort took too long");
      log.warn("{}: cancellation requested", workflowId);
    } catch (WorkflowNotFoundException e) {
      // Already gone.
    } catch (RuntimeException e) {
      log.warn("{}: cancellation not delivered, will try again: {}", workflowId, rootMessage(e));
    }
  }

  private UpgradeProgress query(WorkflowStub stub, String workflowId) {
    try {
      return stub.query("progress", UpgradeProgress.class);
    } catch (RuntimeException e) {
      // Not started yet, between tasks, or no worker to answer: the status keeps what it had.
      log.debug("progress of {} not available: {}", workflowId, rootMessage(e));
      return null;
    }
  }

  /** The step in flight of each node being upgraded or rolled back, from its NodeUpgrade run. */
  private Map<String, UpgradeStep> steps(UpgradeProgress progress) {
    Map<String, UpgradeStep> steps = new LinkedHashMap<>();
    for (NodeStatus n : progress.nodes()) {
      if ((n.phase() == NodePhase.UPGRADING || n.phase() == NodePhase.ROLLING_BACK)
          && n.workflowId() != null && !n.workflowId().isEmpty()) {
        try {
          NodeProgress child = client.newUntypedWorkflowStub(n.workflowId()).query("progress", NodeProgress.class);
          if (child != null && child.currentStep() != null) {
            steps.put(n.node(), child.currentStep());
          }
        } catch (RuntimeException e) {
          // Its run may not have started yet.
        }
      }
    }
    return steps;
  }

  private record Failure(String type, String message) {}

  private static Failure failure(WorkflowStub stub, RunObservation.State state) {
    try {
      stub.getResult(1, TimeUnit.SECONDS, Object.class);
    } catch (WorkflowException e) {
      Throwable cause = e.getCause();
      while (cause != null) {
        if (cause instanceof ApplicationFailure app) {
          return new Failure(app.getType(), app.getOriginalMessage());
        }
        if (cause instanceof CanceledFailure) {
          return new Failure(UpgradeFailures.CANCELLED, "the run was cancelled; nodes in flight were put back");
        }
        if (!(cause instanceof TemporalFailure) || cause.getCause() == cause) {
          break;
        }
        cause = cause.getCause();
      }
      return new Failure(fallbackType(state), rootMessage(e));
    } catch (TimeoutException | RuntimeException e) {
      // Fall through to the state alone.
    }
    return new Failure(fallbackType(state), "the run ended " + state.name().toLowerCase());
  }

  private static String fallbackType(RunObservation.State state) {
    return switch (state) {
      case CANCELED -> UpgradeFailures.CANCELLED;
      case TIMED_OUT -> UpgradeFailures.STEP_TIMED_OUT;
      default -> UpgradeFailures.NODE_UPGRADE_FAILED;
    };
  }

  private static RunObservation without(String workflowId, String machineDeployment, RunObservation.State state) {
    return new RunObservation(workflowId, machineDeployment, state, null, null, null, Map.of(), 0, 0);
  }

  private static long millis(java.time.Instant time) {
    return time == null ? 0 : time.toEpochMilli();
  }

  private static RunObservation.State state(WorkflowExecutionStatus status) {
    return switch (status) {
      case WORKFLOW_EXECUTION_STATUS_RUNNING -> RunObservation.State.RUNNING;
      // A continue-as-new is followed at once by the next run: describe answers for the latest.
      case WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW -> RunObservation.State.RUNNING;
      case WORKFLOW_EXECUTION_STATUS_COMPLETED -> RunObservation.State.COMPLETED;
      case WORKFLOW_EXECUTION_STATUS_FAILED -> RunObservation.State.FAILED;
      case WORKFLOW_EXECUTION_STATUS_CANCELED -> RunObservation.State.CANCELED;
      case WORKFLOW_EXECUTION_STATUS_TERMINATED -> RunObservation.State.TERMINATED;
      case WORKFLOW_EXECUTION_STATUS_TIMED_OUT -> RunObservation.State.TIMED_OUT;
      default -> RunObservation.State.UNKNOWN;
    };
  }

  private static String rootMessage(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    return root.getMessage() == null ? root.getClass().getSimpleName() : root.getMessage();
  }
}
