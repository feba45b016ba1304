package dev.inplace.worker.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityOptions;
import io.temporal.activity.LocalActivityOptions;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestEnvironmentOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactoryOptions;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.MDC;

/** The step is in the logging context inside real activity executions, remote and local. */
class LogContextInterceptorTest {
  private static final String QUEUE = "log-context";

  @ActivityInterface
  public interface Steps {
    String drainNode();

    String stageArtifacts();
  }

  public static class StepsImpl implements Steps {
    @Override
    public String drainNode() {
      return MDC.get("step");
    }

    @Override
    public String stageArtifacts() {
      return MDC.get("step");
    }
  }

  @WorkflowInterface
  public interface Caller {
    @WorkflowMethod
    String call();
  }

  public static class CallerImpl implements Caller {
    @Override
    public String call() {
      Steps remote = Workflow.newActivityStub(Steps.class,
          ActivityOptions.newBuilder().setStartToCloseTimeout(Duration.ofSeconds(10)).build());
      Steps local = Workflow.newLocalActivityStub(Steps.class,
          LocalActivityOptions.newBuilder().setStartToCloseTimeout(Duration.ofSeconds(10)).build());
      return remote.drainNode() + "," + local.stageArtifacts();
    }
  }

  private TestWorkflowEnvironment env;

  @BeforeEach
  void start() {
    env = TestWorkflowEnvironment.newInstance(TestEnvironmentOptions.newBuilder()
        .setWorkerFactoryOptions(WorkerFactoryOptions.newBuilder()
            .setWorkerInterceptors(new LogContextInterceptor()).build())
        .build());
    Worker worker = env.newWorker(QUEUE);
    worker.registerWorkflowImplementationTypes(CallerImpl.class);
    worker.registerActivitiesImplementations(new StepsImpl());
    env.start();
  }

  @AfterEach
  void stop() {
    env.close();
  }

  @Test
  void eachActivitySeesItsStepAndTheContextIsClearedAfter() {
    Caller caller = env.getWorkflowClient().newWorkflowStub(
        Caller.class, WorkflowOptions.newBuilder().setTaskQueue(QUEUE).setWorkflowId("log-context")
            .setWorkflowRunTimeout(Duration.ofMinutes(1)).build()); // a failing activity fails the test, not hangs it
    assertEquals("drain,stage", caller.call());
    assertNull(MDC.get("step"));
  }
}
