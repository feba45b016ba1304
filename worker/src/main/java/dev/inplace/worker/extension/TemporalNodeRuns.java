package dev.inplace.worker.extension;

import dev.inplace.client.RunDescriptions;
import dev.inplace.client.StartOrAttach;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.UpgradeStep;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowException;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * NodeUpgrade runs in Temporal. Every call is bounded: a hook must answer within its timeout, so a
 * progress query that no worker answers quickly is given up (the state from describe still counts).
 */
final class TemporalNodeRuns implements NodeRuns, AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TemporalNodeRuns.class);
  private static final Duration QUERY_TIMEOUT = Duration.ofSeconds(2);

  private final WorkflowClient client;
  private final String taskQueue;
  private final ExecutorService queries =
      Executors.newFixedThreadPool(
          2,
          r -> {
            Thread t = new Thread(r, "inplace-hook-query");
            t.setDaemon(true);
            return t;
          });

  TemporalNodeRuns(WorkflowClient client, String taskQueue) {
    this.client = client;
    this.taskQueue = taskQueue;
  }

  @Override
  public Run find(String workflowId) {
    WorkflowStub stub = client.newUntypedWorkflowStub(workflowId);
    WorkflowExecutionStatus status;
    try {
      status = stub.describe().getStatus();
    } catch (WorkflowNotFoundException e) {
      return new Run(State.NOT_FOUND, "", false);
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        return new Run(State.NOT_FOUND, "", false);
      }
      log.warn("cannot describe {}: {}", workflowId, e.getStatus());
      return new Run(State.UNKNOWN, "Temporal did not answer (" + e.getStatus().getCode() + ")", false);
    }
    return switch (status) {
      case WORKFLOW_EXECUTION_STATUS_RUNNING, WORKFLOW_EXECUTION_STATUS_CONTINUED_AS_NEW ->
          new Run(State.RUNNING, progress(stub), false);
      case WORKFLOW_EXECUTION_STATUS_COMPLETED -> new Run(State.COMPLETED, "", true);
      case WORKFLOW_EXECUTION_STATUS_FAILED, WORKFLOW_EXECUTION_STATUS_CANCELED,
          WORKFLOW_EXECUTION_STATUS_TERMINATED, WORKFLOW_EXECUTION_STATUS_TIMED_OUT -> failed(stub, status);
      default -> new Run(State.UNKNOWN, "run is " + status, false);
    };
  }

  @Override
  public boolean start(String workflowId, NodeUpgradeRequest request) {
    RunDescriptions.Description description = RunDescriptions.node(request, "CAPI UpdateMachine hook");
    WorkflowOptions options =
        WorkflowOptions.newBuilder()
            .setWorkflowId(workflowId)
            .setTaskQueue(taskQueue)
            // The hook decides when a failed run may be followed by a new one (UpdateMachineHook).
            .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY)
            .setStaticSummary(description.summary())
            .setStaticDetails(description.details())
            .build();
    return StartOrAttach.start(client, NodeUpgradeWorkflow.class, options,
        stub -> WorkflowClient.start(stub::upgrade, request));
  }

  private String progress(WorkflowStub stub) {
    CompletableFuture<NodeProgress> query =
        CompletableFuture.supplyAsync(() -> stub.query("progress", NodeProgress.class), queries);
    try {
      NodeProgress p = query.get(QUERY_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
      if (p == null) {
        return "running";
      }
      String step = p.currentStep() == null ? "" : " at " + p.currentStep().cliName();
      return p.phase().name().toLowerCase().replace('_', ' ') + step + (p.message().isEmpty() ? "" : ": " + p.message());
    } catch (TimeoutException e) {
      query.cancel(true);
      return "running (progress not available yet)";
    } catch (Exception e) {
      return "running";
    }
  }

  private static Run failed(WorkflowStub stub, WorkflowExecutionStatus status) {
    try {
      stub.getResult(1, TimeUnit.SECONDS, Object.class);
    } catch (WorkflowException e) {
      for (Throwable cause = e.getCause(); cause != null && cause.getCause() != cause; cause = cause.getCause()) {
        if (cause instanceof ApplicationFailure app) {
          NodeFailure details = details(app);
          // Only a run that stopped before touching the node counts as "nothing changed".
          boolean changed = details == null || details.phase() != NodePhase.FAILED
              || details.failedStep() != UpgradeStep.PREFLIGHT;
          return new Run(State.FAILED, app.getType() + ": " + app.getOriginalMessage(), changed);
        }
        if (cause instanceof CanceledFailure) {
          return new Run(State.FAILED, "the run was cancelled; the node was put back", true);
        }
      }
    } catch (TimeoutException | RuntimeException e) {
      // the status alone, below
    }
    return new Run(State.FAILED, "the run ended " + status.name().replace("WORKFLOW_EXECUTION_STATUS_", "").toLowerCase(),
        true);
  }

  private static NodeFailure details(ApplicationFailure failure) {
    try {
      return failure.getDetails().get(NodeFailure.class);
    } catch (RuntimeException e) {
      return null;
    }
  }

  @Override
  public void close() {
    queries.shutdownNow();
  }
}
