package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;

import com.google.protobuf.Timestamp;
import io.temporal.api.common.v1.ActivityType;
import io.temporal.api.enums.v1.EventType;
import io.temporal.api.history.v1.ActivityTaskCompletedEventAttributes;
import io.temporal.api.history.v1.ActivityTaskScheduledEventAttributes;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.history.v1.StartChildWorkflowExecutionInitiatedEventAttributes;
import java.util.List;
import org.junit.jupiter.api.Test;

class DemoTimelineTest {
  private static final long ZERO = 1_700_000_000_000L;

  private static HistoryEvent.Builder at(long id, long millisAfterZero, EventType type) {
    long t = ZERO + millisAfterZero;
    return HistoryEvent.newBuilder().setEventId(id).setEventType(type)
        .setEventTime(Timestamp.newBuilder().setSeconds(t / 1000).setNanos((int) (t % 1000) * 1_000_000));
  }

  @Test
  void eachEventIsPlacedInSecondsSinceTheDemoStartedWithItsActivityOrChild() {
    List<HistoryEvent> events = List.of(
        at(1, 930, EventType.EVENT_TYPE_WORKFLOW_EXECUTION_STARTED).build(),
        at(5, 1_500, EventType.EVENT_TYPE_ACTIVITY_TASK_SCHEDULED)
            .setActivityTaskScheduledEventAttributes(ActivityTaskScheduledEventAttributes.newBuilder()
                .setActivityType(ActivityType.newBuilder().setName("StageArtifacts")))
            .build(),
        at(7, 3_250, EventType.EVENT_TYPE_ACTIVITY_TASK_COMPLETED)
            .setActivityTaskCompletedEventAttributes(ActivityTaskCompletedEventAttributes.newBuilder().setScheduledEventId(5))
            .build(),
        at(9, 3_300, EventType.EVENT_TYPE_START_CHILD_WORKFLOW_EXECUTION_INITIATED)
            .setStartChildWorkflowExecutionInitiatedEventAttributes(StartChildWorkflowExecutionInitiatedEventAttributes.newBuilder()
                .setWorkflowId("node-upgrade/fleet/edge-1-cp-0/v1.31.2+k3s1"))
            .build());

    assertEquals(List.of(
            "   0.930 cp WORKFLOW_EXECUTION_STARTED",
            "   1.500 cp ACTIVITY_TASK_SCHEDULED StageArtifacts",
            "   3.250 cp ACTIVITY_TASK_COMPLETED StageArtifacts",
            "   3.300 cp START_CHILD_WORKFLOW_EXECUTION_INITIATED node-upgrade/fleet/edge-1-cp-0/v1.31.2+k3s1"),
        DemoTimeline.lines("cp", events, ZERO));
  }
}
