package dev.inplace.sandbox.stack;

import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoRun;
import dev.inplace.sandbox.demo.DemoSummary;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.PrintStream;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The demo through the local stack ({@code --topology processes}, on the Temporal server {@code
 * --temporal} names): starts the stack's processes,
 * applies the ControlPlaneUpgrade and WorkersUpgrade to the estate's management API server, follows
 * them as the in-process demo does (the workers' watchers start the runs), and stops the processes
 * at the end, on failure and on Ctrl-C.
 */
public final class ProcessDemo {
  private ProcessDemo() {}

  /** Runs the demo with a stack in {@code layout}; {@code demoArgs} are the demo's own arguments. */
  public static DemoSummary run(StackLayout layout, DemoOptions options, List<String> demoArgs, PrintStream out) {
    LocalStack.Spec spec = new LocalStack.Spec(
        options.workerProcesses(), DemoOptions.estateArgs(demoArgs), false, true, options.temporal());
    LocalStack stack = LocalStack.up(layout, spec, out);
    Thread onInterrupt = new Thread(() -> LocalStack.down(layout), "inplace-stack-down");
    Runtime.getRuntime().addShutdownHook(onInterrupt);
    try {
      return follow(stack, options, out);
    } finally {
      stack.close();
      try {
        Runtime.getRuntime().removeShutdownHook(onInterrupt);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs (or ran) anyway
      }
    }
  }

  /** Drives the demo against a stack that is up; leaves the stack running. */
  public static DemoSummary follow(LocalStack stack, DemoOptions options, PrintStream out) {
    Map<String, Object> processes = new LinkedHashMap<>();
    processes.put("demo", ProcessHandle.current().pid());
    processes.putAll(stack.processes());
    WorkflowServiceStubs service = connect();
    try (RemoteEstate estate = RemoteEstate.open(stack.layout())) {
      WorkflowClient client = WorkflowClient.newInstance(
          service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
      DemoSummary summary = new DemoRun(estate, client, WorkflowIds.TASK_QUEUE, options, out, false).run();
      summary = summary.withProcesses(processes);
      if (stack.temporalServer() == TemporalServer.DEV_SERVER) {
        // Claimed only once it answered, while the stack is still up (the summary is printed after down).
        String ui = stack.uiUrl(Duration.ofSeconds(30)).orElse(null);
        if (ui == null) {
          out.println("the Temporal UI at " + StackLayout.temporalUiUrl() + " did not answer HTTP 200; see "
              + stack.layout().log(StackLayout.TEMPORAL));
        }
        summary = summary.withTemporal(stack.temporalVersion().orElse(null), ui);
      }
      return summary;
    } finally {
      service.shutdownNow();
    }
  }

  /** A client connection to the stack's Temporal server, as the CLI makes it from TEMPORAL_ADDRESS. */
  public static WorkflowServiceStubs connect() {
    return WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(StackLayout.temporalAddress()).build());
  }
}
