package dev.inplace.sandbox.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.inplace.sandbox.bench.BillableActions.Kind;
import io.temporal.api.common.v1.MeteringMetadata;
import io.temporal.api.common.v1.Payload;
import io.temporal.api.common.v1.SearchAttributes;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.enums.v1.WorkflowTaskFailedCause;
import io.temporal.api.history.v1.ActivityTaskStartedEventAttributes;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.history.v1.MarkerRecordedEventAttributes;
import io.temporal.api.history.v1.UpsertWorkflowSearchAttributesEventAttributes;
import io.temporal.api.history.v1.WorkflowTaskCompletedEventAttributes;
import io.temporal.api.history.v1.WorkflowTaskFailedEventAttributes;
import io.temporal.common.WorkflowExecutionHistory;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class BillableActionsTest {
  private final List<HistoryEvent> events = new ArrayList<>();

  private void event(EventType type) {
    events.add(HistoryEvent.newBuilder().setEventId(events.size() + 1).setEventType(type).build());
  }

  private void event(HistoryEvent.Builder builder) {
    events.add(builder.setEventId(events.size() + 1).build());
  }

  private static HistoryEvent.Builder marker(String name, long taskCompletedId) {
    return HistoryEvent.newBuilder().setEventType(EventType.EVENT_TYPE_MARKER_RECORDED)
        .setMarkerRecordedEventAttributes(MarkerRecordedEventAttributes.newBuilder()
            .setMarkerName(name).setWorkflowTaskCompletedEventId(taskCompletedId));
  }

  private static HistoryEvent.Builder started(int attempt) {
    return HistoryEvent.newBuilder().setEventType(EventType.EVENT_TYPE_ACTIVITY_TASK_STARTED)
        .setActivityTaskStartedEventAttributes(ActivityTaskStartedEventAttributes.newBuilder().setAttempt(attempt));
  }

  private static HistoryEvent.Builder upsert(String... names) {
    SearchAttributes.Builder attributes = SearchAttributes.newBuilder();
    for (String name : names) {
      attributes.putIndexedFields(name, Payload.getDefaultInstance());
    }
    return HistoryEvent.newBuilder().setEventType(EventType.EVENT_TYPE_UPSERT_WORKFLOW_SEARCH_ATTRIBUTES)
        .setUpsertWorkflowSearchAttributesEventAttributes(
            UpsertWorkflowSearchAttributesEventAttributes.newBuilder().setSearchAttributes(attributes));
  }

  private static HistoryEvent.Builder taskFailed(WorkflowTaskFailedCause cause) {
    return HistoryEvent.newBuilder().setEventType(EventType.EVENT_TYPE_WORKFLOW_TASK_FAILED)
        .setWorkflowTaskFailedEventAttributes(WorkflowTaskFailedEventAttributes.newBuilder().setCause(cause));
  }

  @Test
  void aKnownHistoryCostsEachBillableOperationOnceAndNothingForTheRest() {
    event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED); // 1 start
    event(EventType.EVENT_TYPE_WORKFLOW_TASK_SCHEDULED);
    event(EventType.EVENT_TYPE_WORKFLOW_TASK_STARTED);
    // A workflow task whose local activities retried twice beyond their first attempts.
    event(HistoryEvent.newBuilder().setEventType(EventType.EVENT_TYPE_WORKFLOW_TASK_COMPLETED)
        .setWorkflowTaskCompletedEventAttributes(WorkflowTaskCompletedEventAttributes.newBuilder()
            .setMeteringMetadata(MeteringMetadata.newBuilder().setNonfirstLocalActivityExecutionAttempts(2))));
    event(marker("LocalActivity", 4)); // two local activities of one task: 1
    event(marker("LocalActivity", 4));
    event(marker("Version", 4)); // getVersion: free
    event(marker("SideEffect", 4)); // free
    event(upsert("InplacePhase")); // 1
    event(upsert(BillableActions.CHANGE_VERSION)); // versioning's own: free
    event(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED); // 1
    event(started(1)); // a first attempt: no retry
    event(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    event(EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED); // 1
    event(started(3)); // two retries: 2
    event(EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED);
    event(EventType.EVENT_TYPE_TIMER_STARTED); // 1
    event(EventType.EVENT_TYPE_TIMER_FIRED);
    event(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED); // 1 (the child's start is in its history)
    event(EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_STARTED);
    event(EventType.EVENT_TYPE_CHILD_WORKFLOW_EXECUTION_COMPLETED);
    event(EventType.EVENT_TYPE_SIGNAL_EXTERNAL_WORKFLOW_EXECUTION_INITIATED); // billed in the receiver's history
    event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_SIGNALED); // 1
    event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED); // 1
    event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_COMPLETED);
    event(taskFailed(WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_RESET_WORKFLOW)); // 1
    event(taskFailed(WorkflowTaskFailedCause.WORKFLOW_TASK_FAILED_CAUSE_NON_DETERMINISTIC_ERROR)); // free
    event(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW); // billed as the next run's start

    BillableActions actions = new BillableActions().add(events);

    assertEquals(Map.of(
        Kind.WORKFLOW_STARTED, 1L,
        Kind.LOCAL_ACTIVITIES, 3L,
        Kind.SEARCH_ATTRIBUTES_UPSERTED, 1L,
        Kind.ACTIVITY_SCHEDULED, 2L,
        Kind.ACTIVITY_RETRIED, 2L,
        Kind.TIMER_STARTED, 1L,
        Kind.CHILD_WORKFLOW_INITIATED, 1L,
        Kind.SIGNAL_RECEIVED, 1L,
        Kind.UPDATE_ACCEPTED, 1L,
        Kind.RESET, 1L), actions.byKind());
    assertEquals(14, actions.total());
  }

  @Test
  void aContinueAsNewChainAndItsChildCountEveryStartOnceOverTheirHistories() {
    List<HistoryEvent> first = List.of(
        HistoryEvent.newBuilder().setEventId(1).setEventType(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED).build(),
        HistoryEvent.newBuilder().setEventId(2).setEventType(EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED).build(),
        HistoryEvent.newBuilder().setEventId(3).setEventType(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_CONTINUED_AS_NEW).build());
    List<HistoryEvent> second = List.of(
        HistoryEvent.newBuilder().setEventId(1).setEventType(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED).build());
    List<HistoryEvent> child = List.of(
        HistoryEvent.newBuilder().setEventId(1).setEventType(EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED).build(),
        HistoryEvent.newBuilder().setEventId(2).setEventType(EventType.EVENT_TYPE_TIMER_STARTED).build());

    BillableActions actions = new BillableActions().add(first).add(new BillableActions().add(second).add(child));

    // Client start, continue-as-new's start, the child's two (intent and start), its timer.
    assertEquals(Map.of(Kind.WORKFLOW_STARTED, 3L, Kind.CHILD_WORKFLOW_INITIATED, 1L, Kind.TIMER_STARTED, 1L),
        actions.byKind());
    assertEquals(5, actions.total());
  }

  @Test
  void aRealNodeUpgradeHistoryCostsItsStartItsTwelveActivitiesAndItsThreeUpserts() throws Exception {
    // A committed history of the product's NodeUpgrade (a node upgraded, no retries): the workflows
    // module's replay fixture.
    Path fixture = Path.of("..", "workflows", "src", "test", "resources", "histories", "node-upgrade-upgraded-ui-summaries.json");
    List<HistoryEvent> history = WorkflowExecutionHistory.fromJson(Files.readString(fixture)).getEvents();

    BillableActions actions = new BillableActions().add(history);

    assertEquals(Map.of(Kind.WORKFLOW_STARTED, 1L, Kind.ACTIVITY_SCHEDULED, 12L, Kind.SEARCH_ATTRIBUTES_UPSERTED, 3L),
        actions.byKind());
    assertEquals(16, actions.total());
  }
}
