package dev.inplace.client;

import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;

/**
 * Starts the parent runs the CLI, the demo and the benchmarks ask for: the workflow ID is derived
 * from the cluster, pool and target version, so a second start attaches to the run already there.
 * Returns typed stubs so callers can query progress and send the operator Updates.
 */
public final class UpgradeRuns {
  private UpgradeRuns() {}

  /**
   * What a start did: the run's workflow ID, and whether this call started it (false: a run with that
   * ID was already there, running or ended, and keeps the settings it was started with).
   */
  public record Launch(String workflowId, boolean started) {}

  public static ControlPlaneUpgradeWorkflow startControlPlane(
      WorkflowClient client, String taskQueue, ControlPlaneUpgradeRequest request) {
    return client.newWorkflowStub(ControlPlaneUpgradeWorkflow.class, launchControlPlane(client, taskQueue, request).workflowId());
  }

  public static Launch launchControlPlane(WorkflowClient client, String taskQueue, ControlPlaneUpgradeRequest request) {
    String id = WorkflowIds.controlPlaneUpgrade(
        request.cluster().namespace(), request.cluster().name(), request.template().targetVersion());
    WorkflowOptions options = options(id, taskQueue,
        RunSearchAttributes.KIND_CONTROL_PLANE, request.cluster().toString(), request.template().targetVersion(),
        RunDescriptions.controlPlane(request, null));
    return new Launch(id, StartOrAttach.start(client, ControlPlaneUpgradeWorkflow.class, options,
        stub -> WorkflowClient.start(stub::upgrade, request)));
  }

  public static WorkersUpgradeWorkflow startWorkers(
      WorkflowClient client, String taskQueue, WorkersUpgradeRequest request) {
    return client.newWorkflowStub(WorkersUpgradeWorkflow.class, launchWorkers(client, taskQueue, request).workflowId());
  }

  public static Launch launchWorkers(WorkflowClient client, String taskQueue, WorkersUpgradeRequest request) {
    String id = WorkflowIds.workersUpgrade(
        request.cluster().namespace(), request.cluster().name(), request.machineDeployment(),
        request.template().targetVersion());
    WorkflowOptions options = options(id, taskQueue,
        RunSearchAttributes.KIND_WORKERS, request.cluster().toString(), request.template().targetVersion(),
        RunDescriptions.workers(request, null));
    return new Launch(id, StartOrAttach.start(client, WorkersUpgradeWorkflow.class, options,
        stub -> WorkflowClient.start(stub::upgrade, request)));
  }

  private static WorkflowOptions options(
      String id, String taskQueue, String kind, String cluster, String version, RunDescriptions.Description description) {
    io.temporal.common.SearchAttributes attributes =
        io.temporal.common.SearchAttributes.newBuilder()
            .set(RunSearchAttributes.KIND, kind)
            .set(RunSearchAttributes.CLUSTER, cluster)
            .set(RunSearchAttributes.TARGET_VERSION, version)
            .build();
    return WorkflowOptions.newBuilder()
        .setWorkflowId(id)
        .setTaskQueue(taskQueue)
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY)
        .setTypedSearchAttributes(attributes)
        .setStaticSummary(description.summary())
        .setStaticDetails(description.details())
        .build();
  }
}
