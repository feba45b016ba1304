package dev.inplace.sandbox.bench;

import io.temporal.api.enums.v1.WorkflowTaskFailedCause;
import io.temporal.api.history.v1.HistoryEvent;
import java.util.Collections;
import java.util.EnumMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Temporal Cloud's billable actions in workflow histories, as Temporal Cloud's documentation of
 * actions defines them by history event type (docs/benchmarks.md, "What a node upgrade costs on
 * Temporal Cloud"). Counted per history; summed over every history of a set of runs (each run of a
 * continue-as-new chain, every child), each action is counted once:
 *
 * <ul>
 *   <li>a workflow start, by client, continue-as-new or parent: its run's {@code WorkflowExecutionStarted}
 *       (a continue-as-new is billed as the next run's start, not at {@code ContinuedAsNew});
 *   <li>a child start is two actions: the parent's {@code StartChildWorkflowExecutionInitiated} and the
 *       child's own start;
 *   <li>an activity: {@code ActivityTaskScheduled}, and each retry ({@code ActivityTaskStarted}'s
 *       attempt minus one);
 *   <li>local activities: one per workflow task that recorded {@code LocalActivity} markers, plus the
 *       task's metered retries;
 *   <li>a timer, a signal received ({@code WorkflowExecutionSignaled}; a signal sent to another
 *       workflow is billed in the receiver's history, not at {@code SignalExternal...Initiated}), an
 *       accepted Update, a search-attribute upsert (but one that only sets {@code TemporalChangeVersion}),
 *       an options update, a reset, a Nexus operation scheduled or cancelled.
 * </ul>
 *
 * Not in any history, so not counted: queries, activity heartbeats that reach the server, rejected
 * Updates.
 */
public final class BillableActions {
  /** What an action was spent on. */
  public enum Kind {
    WORKFLOW_STARTED,
    CHILD_WORKFLOW_INITIATED,
    ACTIVITY_SCHEDULED,
    ACTIVITY_RETRIED,
    LOCAL_ACTIVITIES,
    TIMER_STARTED,
    SIGNAL_RECEIVED,
    UPDATE_ACCEPTED,
    SEARCH_ATTRIBUTES_UPSERTED,
    OPTIONS_UPDATED,
    RESET,
    NEXUS_OPERATION
  }

  /** The search attribute the SDK's versioning upserts; exempt from billing. */
  static final String CHANGE_VERSION = "TemporalChangeVersion";
  private static final String LOCAL_ACTIVITY_MARKER = "LocalActivity";

  private final Map<Kind, Long> byKind = new EnumMap<>(Kind.class);

  /** Adds the actions of one run's history; returns this. */
  public BillableActions add(List<HistoryEvent> history) {
    Set<Long> localActivityTasks = new HashSet<>();
    for (HistoryEvent event : history) {
      switch (event.getEventType()) {
        case EVENT_TYPE_WORKFLOW_EXECUTION_STARTED -> count(Kind.WORKFLOW_STARTED, 1);
        case EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED -> count(Kind.CHILD_WORKFLOW_INITIATED, 1);
        case EVENT_TYPE_ACTIVITY_TASK_SCHEDULED -> count(Kind.ACTIVITY_SCHEDULED, 1);
        case EVENT_TYPE_ACTIVITY_TASK_STARTED ->
            count(Kind.ACTIVITY_RETRIED, Math.max(0, event.getActivityTaskStartedEventAttributes().getAttempt() - 1));
        case EVENT_TYPE_MARKER_RECORDED -> {
          var marker = event.getMarkerRecordedEventAttributes();
          if (LOCAL_ACTIVITY_MARKER.equals(marker.getMarkerName())
              && localActivityTasks.add(marker.getWorkflowTaskCompletedEventId())) {
            count(Kind.LOCAL_ACTIVITIES, 1);
          }
        }
        case EVENT_TYPE_WORKFLOW_TASK_COMPLETED -> count(Kind.LOCAL_ACTIVITIES,
            event.getWorkflowTaskCompletedEventAttributes().getMeteringMetadata().getNonfirstLocalActivityExecutionAttempts());
        case EVENT_TYPE_TIMER_STARTED -> count(Kind.TIMER_STARTED, 1);
        case EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED -> count(Kind.SIGNAL_RECEIVED, 1);
        case EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED -> count(Kind.UPDATE_ACCEPTED, 1);
        case EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES -> {
          Set<String> names = event.getUpsertWorkflowSearchAttributesEventAttributes().getSearchAttributes()
              .getIndexedFieldsMap().keySet();
          if (!names.isEmpty() && !Set.of(CHANGE_VERSION).containsAll(names)) {
            count(Kind.SEARCH_ATTRIBUTES_UPSERTED, 1);
          }
        }
        case EVENT_TYPE_WORKFLOW_EXECUTION_OPTIONS_UPDATED -> count(Kind.OPTIONS_UPDATED, 1);
        case EVENT_TYPE_WORKFLOW_TASK_FAILED -> {
          if (event.getWorkflowTaskFailedEventAttributes().getCause()
              == WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW) {
            count(Kind.RESET, 1);
          }
        }
        case EVENT_TYPE_NEXUS_OPERATION_SCHEDULED, EVENT_TYPE_NEXUS_OPERATION_CANCEL_REQUESTED ->
            count(Kind.NEXUS_OPERATION, 1);
        default -> { }
      }
    }
    return this;
  }

  /** Adds what {@code other} counted; returns this. */
  public BillableActions add(BillableActions other) {
    other.byKind.forEach(this::count);
    return this;
  }

  public long total() {
    return byKind.values().stream().mapToLong(Long::longValue).sum();
  }

  /** The actions of each kind that occurred (kinds with none are left out). */
  public Map<Kind, Long> byKind() {
    return Collections.unmodifiableMap(new EnumMap<>(byKind));
  }

  private void count(Kind kind, long n) {
    if (n > 0) {
      byKind.merge(kind, n, Long::sum);
    }
  }
}
