package dev.inplace.workflows.api;

/** Workflow IDs and the task queue: one place, so a second start of the same work is refused. */
public final class WorkflowIds {
  public static final String TASK_QUEUE = "inplace";

  private WorkflowIds() {}

  /** {@code cp-upgrade/<ns>/<cluster>/<version>}. */
  public static String controlPlaneUpgrade(String namespace, String cluster, String version) {
    return "cp-upgrade/" + namespace + "/" + cluster + "/" + version;
  }

  /** {@code workers-upgrade/<ns>/<cluster>/<machinedeployment>/<version>}. */
  public static String workersUpgrade(String namespace, String cluster, String machineDeployment, String version) {
    return "workers-upgrade/" + namespace + "/" + cluster + "/" + machineDeployment + "/" + version;
  }

  /** {@code node-upgrade/<ns>/<machine>/<version>}: never two upgrades of one node at once. */
  public static String nodeUpgrade(String namespace, String machineName, String version) {
    return "node-upgrade/" + namespace + "/" + machineName + "/" + version;
  }
}
