package dev.inplace.sandbox.chaos;

import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.PendingActivityState;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.TimeUnit;

/**
 * What the Temporal server says is in flight: the started activities of the campaign's runs
 * ({@code DescribeWorkflowExecution}'s pending activities), each with the PID of the worker that runs
 * it (its identity is {@code pid@host}). Needs no worker: it asks the server, not the workflows.
 */
final class ActivityWatch {
  /** An activity attempt started on a worker process and not yet closed. */
  record InFlight(String workflowId, String activity, long workerPid, int attempt) {}

  private final WorkflowServiceStubs service;
  private final Set<String> workflowIds = new CopyOnWriteArraySet<>();

  ActivityWatch(WorkflowServiceStubs service) {
    this.service = service;
  }

  /** Follows {@code ids} from now on (node runs before they start are fine: they describe as none). */
  void follow(List<String> ids) {
    workflowIds.addAll(ids);
  }

  Set<String> workflowIds() {
    return Set.copyOf(workflowIds);
  }

  /** Every started activity attempt of the followed runs. */
  List<InFlight> started() {
    List<InFlight> found = new ArrayList<>();
    for (String id : workflowIds) {
      describe(id).ifPresent(d -> {
        for (PendingActivityInfo a : d.getPendingActivitiesList()) {
          Optional<Long> pid = pidOf(a.getLastWorkerIdentity());
          if (a.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED && pid.isPresent()) {
            found.add(new InFlight(id, a.getActivityType().getName(), pid.get(), a.getAttempt()));
          }
        }
      });
    }
    return found;
  }

  /** Whether {@code activity}'s attempt is still started on the same worker (after that worker died: it was in flight). */
  boolean stillStarted(InFlight activity) {
    return describe(activity.workflowId()).map(d -> d.getPendingActivitiesList().stream().anyMatch(a ->
            a.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
                && a.getActivityType().getName().equals(activity.activity())
                && a.getAttempt() == activity.attempt()
                && pidOf(a.getLastWorkerIdentity()).orElse(-1L) == activity.workerPid()))
        .orElse(false);
  }

  Optional<DescribeWorkflowExecutionResponse> describe(String workflowId) {
    try {
      return Optional.of(service.blockingStub().withDeadlineAfter(5, TimeUnit.SECONDS)
          .describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
              .setNamespace("default")
              .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId))
              .build()));
    } catch (StatusRuntimeException e) {
      return Optional.empty(); // not started yet
    }
  }

  static Optional<Long> pidOf(String identity) {
    int at = identity == null ? -1 : identity.indexOf('@');
    try {
      return at > 0 ? Optional.of(Long.parseLong(identity.substring(0, at))) : Optional.empty();
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
