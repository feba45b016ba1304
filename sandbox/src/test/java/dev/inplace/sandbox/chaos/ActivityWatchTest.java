package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.google.protobuf.Timestamp;
import dev.inplace.workflows.api.RunSearchAttributes;
import io.temporal.api.common.v1.ActivityType;
import io.temporal.api.common.v1.SearchAttributes;
import io.temporal.api.enums.v1.PendingActivityState;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import io.temporal.common.converter.DefaultDataConverter;
import java.util.List;
import org.junit.jupiter.api.Test;

/** What the killer reads from the server's description of a run. */
class ActivityWatchTest {
  private static final String WF = "node-upgrade/fleet/edge-1-worker-b-1/v1.31.2+k3s1";

  private static DescribeWorkflowExecutionResponse run(String phase, PendingActivityInfo... pending) {
    SearchAttributes.Builder attributes = SearchAttributes.newBuilder();
    if (phase != null) {
      attributes.putIndexedFields(RunSearchAttributes.PHASE.getName(),
          DefaultDataConverter.STANDARD_INSTANCE.toPayload(phase).orElseThrow());
    }
    return DescribeWorkflowExecutionResponse.newBuilder()
        .setWorkflowExecutionInfo(WorkflowExecutionInfo.newBuilder().setSearchAttributes(attributes))
        .addAllPendingActivities(List.of(pending))
        .build();
  }

  private static PendingActivityInfo pending(String type, PendingActivityState state, String identity) {
    return PendingActivityInfo.newBuilder()
        .setActivityType(ActivityType.newBuilder().setName(type))
        .setState(state)
        .setAttempt(2)
        .setLastWorkerIdentity(identity)
        .setLastStartedTime(Timestamp.newBuilder().setSeconds(1_795_743_600L).setNanos(250_000_000))
        .build();
  }

  @Test
  void theAttemptsOfARunRollingBackAreItsCompensationWithTheirWorkerAndStart() {
    List<ActivityWatch.InFlight> started = ActivityWatch.started(WF, run("ROLLING_BACK",
        pending("RestartService", PendingActivityState.PENDING_ACTIVITY_STATE_STARTED, "4321@host"),
        pending("UncordonNode", PendingActivityState.PENDING_ACTIVITY_STATE_SCHEDULED, "4321@host")));
    assertEquals(List.of(new ActivityWatch.InFlight(WF, "RestartService", 4321, 2, true, 1_795_743_600_250L)), started);
    assertEquals(KillKind.COMPENSATION, started.get(0).kind());
  }

  @Test
  void anUpgradingRunOrOneWithoutAPhaseIsNotCompensating() {
    PendingActivityInfo restart = pending("RestartService", PendingActivityState.PENDING_ACTIVITY_STATE_STARTED, "7@h");
    assertFalse(ActivityWatch.started(WF, run("UPGRADING", restart)).get(0).compensating());
    assertFalse(ActivityWatch.started(WF, run(null, restart)).get(0).compensating());
    assertTrue(ActivityWatch.started(WF, run(null,
        pending("RestartService", PendingActivityState.PENDING_ACTIVITY_STATE_STARTED, "no-pid"))).isEmpty());
  }
}
