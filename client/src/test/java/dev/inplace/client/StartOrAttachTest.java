package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class StartOrAttachTest {
  private static final String QUEUE = "start-or-attach";

  @WorkflowInterface
  public interface Echo {
    @WorkflowMethod
    String run(String input);
  }

  public static class EchoImpl implements Echo {
    @Override
    public String run(String input) {
      Workflow.sleep(Duration.ofMinutes(1));
      return input;
    }
  }

  private TestWorkflowEnvironment env;

  @BeforeEach
  void start() {
    env = TestWorkflowEnvironment.newInstance();
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(EchoImpl.class);
    env.start();
  }

  @AfterEach
  void stop() {
    env.close();
  }

  private static WorkflowOptions options(String id) {
    return WorkflowOptions.newBuilder()
        .setWorkflowId(id)
        .setTaskQueue(QUEUE)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
        .build();
  }

  @Test
  void aSecondStartUnderTheSameIdAttachesToTheRunningRunInsteadOfStartingAnother() {
    WorkflowClient client = env.getWorkflowClient();

    boolean first = StartOrAttach.start(client, Echo.class, options("run-1"), stub -> WorkflowClient.start(stub::run, "first"));
    String firstRunId = client.newUntypedWorkflowStub("run-1").describe().getExecution().getRunId();
    boolean second = StartOrAttach.start(client, Echo.class, options("run-1"), stub -> WorkflowClient.start(stub::run, "second"));

    assertTrue(first);
    assertFalse(second);
    WorkflowStub run = client.newUntypedWorkflowStub("run-1");
    assertEquals("first", run.getResult(String.class));
    assertEquals(firstRunId, client.newUntypedWorkflowStub("run-1").describe().getExecution().getRunId());
  }

  @Test
  void aClosedRunUnderARejectDuplicatePolicyIsNeverFollowedByASecond() {
    WorkflowClient client = env.getWorkflowClient();
    StartOrAttach.start(client, Echo.class, options("run-2"), stub -> WorkflowClient.start(stub::run, "only"));
    client.newUntypedWorkflowStub("run-2").getResult(String.class);

    assertFalse(StartOrAttach.start(client, Echo.class, options("run-2"), stub -> WorkflowClient.start(stub::run, "again")));
  }
}
