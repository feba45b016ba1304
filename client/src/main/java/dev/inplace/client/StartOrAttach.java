package dev.inplace.client;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionAlreadyStarted;
import io.temporal.client.WorkflowOptions;
import java.util.function.Consumer;

/**
 * The one start-or-attach of inplace runs. Every run has a workflow ID derived from what it upgrades,
 * so starting it twice (a restarted watcher, a second replica, a repeated hook call, a CLI retried by
 * a script) finds the run already there instead of starting a second one. The options' reuse policy
 * decides whether a closed run under that ID may be followed by a new one.
 */
public final class StartOrAttach {
  private StartOrAttach() {}

  /**
   * Starts a run of {@code type} with {@code options}; {@code start} issues the start on the typed
   * stub, e.g. {@code stub -> WorkflowClient.start(stub::upgrade, request)}.
   *
   * @return true when this call started the run, false when a run with that ID was already there
   */
  public static <W> boolean start(
      WorkflowClient client, Class<W> type, WorkflowOptions options, Consumer<W> start) {
    W stub = client.newWorkflowStub(type, options);
    try {
      start.accept(stub);
      return true;
    } catch (WorkflowExecutionAlreadyStarted e) {
      return false;
    }
  }
}
