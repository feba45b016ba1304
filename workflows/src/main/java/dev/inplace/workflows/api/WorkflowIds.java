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

  /**
   * {@code cp-upgrade/<ns>/<cr-name>/<cr-uid>}: the one ControlPlaneUpgrade run of a
   * ControlPlaneUpgrade custom resource, so a restarted watcher or a repeated event never starts a
   * second one (the uid also tells apart a CR deleted and created again under the same name).
   */
  public static String controlPlaneUpgradeForResource(String namespace, String name, String uid) {
    return "cp-upgrade/" + namespace + "/" + name + "/" + uid;
  }

  /**
   * {@code workers-upgrade/<ns>/<cr-name>/<cr-uid>/<machinedeployment>}: the run of one
   * MachineDeployment of a WorkersUpgrade custom resource.
   */
  public static String workersUpgradeForResource(
      String namespace, String name, String uid, String machineDeployment) {
    return "workers-upgrade/" + namespace + "/" + name + "/" + uid + "/" + machineDeployment;
  }

  /**
   * {@code plan/<ns>/<cluster>/<version>/<request>}: one Plan run; {@code request} tells apart plans
   * asked for again (a plan changes nothing, so two may run at once).
   */
  public static String plan(String namespace, String cluster, String version, String request) {
    return "plan/" + namespace + "/" + cluster + "/" + version + "/" + request;
  }

  /** {@code node-upgrade/<ns>/<machine>/<version>}: never two upgrades of one node at once. */
  public static String nodeUpgrade(String namespace, String machineName, String version) {
    return "node-upgrade/" + namespace + "/" + machineName + "/" + version;
  }

  /**
   * {@code node-upgrade-hook/<ns>/<machine>/<spec-hash>}: the NodeUpgrade run the CAPI runtime
   * extension's UpdateMachine hook starts for one Machine and one desired spec, so every repeated
   * call for that spec finds the same run, and a changed spec gets a new one.
   */
  public static String nodeUpgradeForHook(String namespace, String machineName, String specHash) {
    return "node-upgrade-hook/" + namespace + "/" + machineName + "/" + specHash;
  }
}
