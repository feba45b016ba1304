package dev.inplace.worker.watch;

import com.google.common.util.concurrent.ListenableFuture;
import com.google.common.util.concurrent.MoreExecutors;
import com.google.common.util.concurrent.SettableFuture;
import com.google.protobuf.ByteString;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.HistoryEventFilterType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryRequest;
import io.temporal.api.workflowservice.v1.GetWorkflowExecutionHistoryResponse;
import io.temporal.client.WorkflowClient;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Follows runs to their end with Temporal's long poll on the close event of their history, so the
 * watcher hears of a run's end when it happens instead of on its next status tick. A run that
 * continues as new keeps its workflow ID and is followed on into its next run; any other close
 * (completed, failed, cancelled, terminated, timed out) calls the follow's {@code onClose} once.
 *
 * <p>Each workflow ID is followed at most once at a time, and once its close was reported it is not
 * followed again (IDs are never reused: one run per CR) until {@link #forget}. A follow that fails
 * (server unavailable, no permission) just stops: the caller's status timer still covers that run,
 * and a later {@link #follow} tries again. Nothing blocks: the polls are asynchronous gRPC calls,
 * each bounded by the client's long-poll timeout and polled again when it expires.
 */
final class RunFollower implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(RunFollower.class);

  private final WorkflowServiceStubs service;
  private final String namespace;
  private final Duration pollTimeout;
  /** A poll in flight, on the run {@code runId} ("" for the latest run of the ID). */
  private record Poll(String runId, ListenableFuture<GetWorkflowExecutionHistoryResponse> future) {}

  /** Workflow ID -> its poll in flight. */
  private final Map<String, Poll> polls = new HashMap<>();
  /** Workflow IDs whose close was reported. */
  private final Set<String> closed = new HashSet<>();
  private boolean stopped;

  RunFollower(WorkflowClient client) {
    this.service = client.getWorkflowServiceStubs();
    this.namespace = client.getOptions().getNamespace();
    this.pollTimeout = service.getOptions().getRpcLongPollTimeout();
  }

  /**
   * Follows the run(s) of {@code workflowId} until the last one closes, then runs {@code onClose}
   * (on a gRPC thread: it must not block). Does nothing when this ID is followed already, or its
   * close was reported.
   */
  void follow(String workflowId, Runnable onClose) {
    poll(workflowId, "", ByteString.EMPTY, onClose, null);
  }

  /** The run of {@code workflowId} followed now ("" before its first continue-as-new); empty when not followed. */
  synchronized Optional<String> followedRun(String workflowId) {
    return Optional.ofNullable(polls.get(workflowId)).map(Poll::runId);
  }

  /** Drops what is known of {@code workflowId} (its CR is settled or gone): stops following it. */
  void forget(String workflowId) {
    Poll poll;
    synchronized (this) {
      closed.remove(workflowId);
      poll = polls.remove(workflowId);
    }
    if (poll != null) {
      poll.future().cancel(true);
    }
  }

  /** Polls for the close event; {@code previous} is the poll this one follows on, null for a new follow. */
  private void poll(
      String workflowId,
      String runId,
      ByteString pageToken,
      Runnable onClose,
      ListenableFuture<GetWorkflowExecutionHistoryResponse> previous) {
    GetWorkflowExecutionHistoryRequest request =
        GetWorkflowExecutionHistoryRequest.newBuilder()
            .setNamespace(namespace)
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId).setRunId(runId))
            .setWaitNewEvent(true)
            .setHistoryEventFilterType(HistoryEventFilterType.HISTORY_EVENT_FILTER_TYPE_CLOSE_EVENT)
            .setSkipArchival(true)
            .setNextPageToken(pageToken)
            .build();
    SettableFuture<GetWorkflowExecutionHistoryResponse> future = SettableFuture.create();
    synchronized (this) {
      boolean wanted = previous == null
          ? !polls.containsKey(workflowId) && !closed.contains(workflowId)
          : current(workflowId, previous);
      if (stopped || !wanted) {
        return;
      }
      polls.put(workflowId, new Poll(runId, future));
    }
    future.addListener(() -> answered(workflowId, runId, pageToken, future, onClose), MoreExecutors.directExecutor());
    try {
      // Outside the lock: a client's first call asks the server for its capabilities, and waits.
      // Cancelling `future` (forget, close) cancels this call.
      future.setFuture(
          service.futureStub()
              .withDeadlineAfter(pollTimeout.toMillis(), TimeUnit.MILLISECONDS)
              .getWorkflowExecutionHistory(request));
    } catch (RuntimeException e) {
      future.setException(e); // e.g. that first call failed: answered() stops this follow
    }
  }

  private void answered(
      String workflowId,
      String runId,
      ByteString pageToken,
      ListenableFuture<GetWorkflowExecutionHistoryResponse> future,
      Runnable onClose) {
    GetWorkflowExecutionHistoryResponse response;
    try {
      response = future.get();
    } catch (ExecutionException e) {
      Status.Code code = e.getCause() instanceof StatusRuntimeException s ? s.getStatus().getCode() : Status.Code.UNKNOWN;
      if (code == Status.Code.DEADLINE_EXCEEDED) {
        poll(workflowId, runId, pageToken, onClose, future); // nothing closed within the long poll: wait on
      } else if (code == Status.Code.NOT_FOUND) {
        ended(workflowId, future, onClose); // no such run (any more): the reconcile records what it finds
      } else {
        // The status timer covers this run meanwhile; the next follow() of its CR tries again.
        log.info("cannot follow {} to its end ({}); its status is refreshed on the status interval", workflowId, code);
        stop(workflowId, future);
      }
      return;
    } catch (InterruptedException | java.util.concurrent.CancellationException e) {
      stop(workflowId, future);
      return;
    }
    HistoryEvent close = response.getHistory().getEventsCount() == 0 ? null : response.getHistory().getEvents(0);
    if (close == null) {
      // The long poll ended without a close event: poll on where it left off.
      poll(workflowId, runId, response.getNextPageToken(), onClose, future);
    } else if (close.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW) {
      // Same workflow ID, next run: follow that one.
      poll(workflowId, close.getWorkflowExecutionContinuedAsNewEventAttributes().getNewExecutionRunId(),
          ByteString.EMPTY, onClose, future);
    } else {
      ended(workflowId, future, onClose);
    }
  }

  private void ended(String workflowId, ListenableFuture<?> future, Runnable onClose) {
    synchronized (this) {
      if (stopped || !current(workflowId, future)) {
        return;
      }
      polls.remove(workflowId);
      closed.add(workflowId);
    }
    try {
      onClose.run();
    } catch (RuntimeException e) {
      log.warn("{}: reacting to its end failed: {}", workflowId, e.toString());
    }
  }

  private synchronized void stop(String workflowId, ListenableFuture<?> future) {
    if (current(workflowId, future)) {
      polls.remove(workflowId);
    }
  }

  /** Whether {@code future} is the poll in flight for {@code workflowId} (not forgotten or replaced). */
  private boolean current(String workflowId, ListenableFuture<?> future) {
    Poll poll = polls.get(workflowId);
    return poll != null && poll.future() == future;
  }

  /** Stops following every run (their polls are cancelled); no callback runs from here on. */
  @Override
  public void close() {
    Map<String, Poll> open;
    synchronized (this) {
      stopped = true;
      open = new HashMap<>(polls);
      polls.clear();
      closed.clear();
    }
    open.values().forEach(p -> p.future().cancel(true));
  }
}
