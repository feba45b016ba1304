package dev.inplace.workflows.api;

/** Workflow IDs and the task queue: one place, so a second start of the same work is refused. */
public final class WorkflowIds {
  public static final String TASK_QUEUE = "inplace";

  private WorkflowIds() {}

  /** {@code node-upgrade/<ns>/<machine>/<version>}: never two upgrades of one node at once. */
  public static String nodeUpgrade(String namespace, String machineName, String version) {
    return "node-upgrade/" + namespace + "/" + machineName + "/" + version;
  }
}
