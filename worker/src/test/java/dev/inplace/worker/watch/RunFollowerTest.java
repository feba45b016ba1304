package dev.inplace.worker.watch;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@Timeout(60)
class RunFollowerTest {
  private static final String TASK_QUEUE = "run-follower-test";
  private static final Duration WAIT = Duration.ofSeconds(20);

  /** Continues as new on each of the first two {@code next} signals, ends on the third. */
  @WorkflowInterface
  public interface ThreeRuns {
    @WorkflowMethod
    void run(int generation);

    @SignalMethod
    void next();
  }

  public static class ThreeRunsImpl implements ThreeRuns {
    private boolean next;

    @Override
    public void run(int generation) {
      Workflow.await(() -> next);
      if (generation < 2) {
        Workflow.continueAsNew(generation + 1);
      }
    }

    @Override
    public void next() {
      next = true;
    }
  }

  private TestWorkflowEnvironment env;
  private WorkflowClient client;
  private RunFollower follower;

  @BeforeEach
  void setUp() {
    env = TestWorkflowEnvironment.newInstance(TestEnvironmentOptions.newBuilder().setUseTimeskipping(false).build());
    env.newWorker(TASK_QUEUE).registerWorkflowImplementationTypes(ThreeRunsImpl.class);
    env.start();
    client = env.getWorkflowClient();
    follower = new RunFollower(client);
  }

  @AfterEach
  void tearDown() {
    follower.close();
    env.close();
  }

  private WorkflowStub start(String id) {
    ThreeRuns run = client.newWorkflowStub(ThreeRuns.class, WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(TASK_QUEUE).build());
    WorkflowClient.start(run::run, 0);
    return client.newUntypedWorkflowStub(id);
  }

  private String currentRun(String id) {
    return client.newUntypedWorkflowStub(id).describe().getExecution().getRunId();
  }

  @Test
  void aRunThatContinuesAsNewIsFollowedIntoItsNextRunAndReportedOnceTheLastEnds() {
    String id = "three-runs";
    String first = start(id).describe().getExecution().getRunId();
    AtomicInteger ends = new AtomicInteger();
    follower.follow(id, ends::incrementAndGet);

    client.newUntypedWorkflowStub(id).signal("next");
    await().atMost(WAIT).until(() -> !currentRun(id).equals(first));
    // The follow's poll is on the first or the second run now; either way it sees the second run's
    // continue-as-new below.
    String second = currentRun(id);
    client.newUntypedWorkflowStub(id).signal("next");
    await().atMost(WAIT).until(() -> !currentRun(id).equals(second));
    String third = currentRun(id);
    await().atMost(WAIT).until(() -> ends.get() > 0 || follower.followedRun(id).equals(Optional.of(third)));
    assertEquals(0, ends.get(), "a continue-as-new is not the end");
    assertEquals(Optional.of(third), follower.followedRun(id));

    client.newUntypedWorkflowStub(id).signal("next");
    await().atMost(WAIT).until(() -> ends.get() > 0);
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, client.newUntypedWorkflowStub(id).describe().getStatus());
    assertEquals(1, ends.get());
    assertEquals(Optional.empty(), follower.followedRun(id));
  }

  @Test
  void anIdIsFollowedOnceAtATimeAndNotAgainAfterItsEndWasReported() {
    WorkflowStub stub = start("once");
    AtomicInteger ends = new AtomicInteger();
    follower.follow("once", ends::incrementAndGet);
    follower.follow("once", ends::incrementAndGet);

    stub.terminate("ended by the test");
    await().atMost(WAIT).until(() -> ends.get() > 0);
    follower.follow("once", ends::incrementAndGet);

    assertEquals(Optional.empty(), follower.followedRun("once"), "an ended ID is not followed again");
    assertEquals(1, ends.get());
  }

  @Test
  void afterCloseNothingIsFollowed() {
    start("after-close");
    follower.follow("after-close", () -> {});
    assertTrue(follower.followedRun("after-close").isPresent());

    follower.close();
    assertEquals(Optional.empty(), follower.followedRun("after-close"));
    follower.follow("after-close", () -> {});
    assertEquals(Optional.empty(), follower.followedRun("after-close"));
  }

  @Test
  void aFollowTheServerCannotAnswerStopsWithoutReportingAnEnd() {
    WorkflowServiceStubs nowhere =
        WorkflowServiceStubs.newServiceStubs(WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:1").build());
    AtomicInteger ends = new AtomicInteger();
    try (RunFollower unreachable = new RunFollower(WorkflowClient.newInstance(nowhere))) {
      unreachable.follow("anything", ends::incrementAndGet);
      await().atMost(WAIT).until(() -> unreachable.followedRun("anything").isEmpty());
    } finally {
      nowhere.shutdownNow();
    }
    assertEquals(0, ends.get(), "an unanswered follow is not an end: the status timer covers the run");
  }
}
