package dev.inplace.sandbox.chaos;

import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.RunSearchAttributes;
import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.Payload;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.PendingActivityState;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import io.temporal.common.converter.DefaultDataConverter;
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
  /** The node runs' phase while their compensations run (search attribute {@code InplacePhase}). */
  static final String ROLLING_BACK = NodePhase.ROLLING_BACK.name();

  /**
   * An activity attempt started on a worker process and not yet closed.
   *
   * @param compensating its run was rolling back when the server was asked ({@link #ROLLING_BACK})
   * @param startedAtMillis when the server says the attempt started (epoch ms; 0 when it does not say)
   */
  record InFlight(String workflowId, String activity, long workerPid, int attempt, boolean compensating,
      long startedAtMillis) {
    KillKind kind() {
      return KillKind.of(activity, compensating);
    }

    /** The same attempt: run, activity, attempt and worker (what the server knew about it may differ). */
    boolean sameAttempt(InFlight other) {
      return workflowId.equals(other.workflowId) && activity.equals(other.activity) && attempt == other.attempt
          && workerPid == other.workerPid;
    }

    @Override
    public String toString() {
      return activity + " attempt " + attempt + " of " + workflowId + (compensating ? " (rolling back)" : "");
    }
  }

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
      describe(id).ifPresent(d -> found.addAll(started(id, d)));
    }
    return found;
  }

  /** The started attempts of one run, as {@code d} describes it. */
  static List<InFlight> started(String workflowId, DescribeWorkflowExecutionResponse d) {
    boolean compensating = ROLLING_BACK.equals(phaseOf(d).orElse(""));
    List<InFlight> found = new ArrayList<>();
    for (PendingActivityInfo a : d.getPendingActivitiesList()) {
      Optional<Long> pid = pidOf(a.getLastWorkerIdentity());
      if (a.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED && pid.isPresent()) {
        long started = a.hasLastStartedTime() ? a.getLastStartedTime().getSeconds() * 1000 + a.getLastStartedTime().getNanos() / 1_000_000 : 0;
        found.add(new InFlight(workflowId, a.getActivityType().getName(), pid.get(), a.getAttempt(), compensating, started));
      }
    }
    return found;
  }

  /** The run's {@code InplacePhase} search attribute (node runs upsert their phase), if it has one. */
  static Optional<String> phaseOf(DescribeWorkflowExecutionResponse d) {
    Payload phase = d.getWorkflowExecutionInfo().getSearchAttributes().getIndexedFieldsMap()
        .get(RunSearchAttributes.PHASE.getName());
    if (phase == null) {
      return Optional.empty();
    }
    try {
      return Optional.ofNullable(DefaultDataConverter.STANDARD_INSTANCE.fromPayload(phase, String.class, String.class));
    } catch (RuntimeException unreadable) {
      return Optional.empty();
    }
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
