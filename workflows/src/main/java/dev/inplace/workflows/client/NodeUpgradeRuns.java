package dev.inplace.workflows.client;

import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionAlreadyStarted;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;

/**
 * Starts NodeUpgrade runs idempotently. The workflow ID is derived from the Machine and the target
 * version, so asking twice attaches to the run already there instead of starting a second one; a
 * new run is only allowed after a failed one (a retry).
 */
public final class NodeUpgradeRuns {
  private NodeUpgradeRuns() {}

  public static String workflowId(NodeUpgradeRequest request) {
    return WorkflowIds.nodeUpgrade(
        request.node().cluster().namespace(), request.node().machineName(), request.targetVersion());
  }

  /** Starts the run for this node and version, or finds the one that exists. */
  public static WorkflowStub startOrAttach(WorkflowClient client, String taskQueue, NodeUpgradeRequest request) {
    String id = workflowId(request);
    NodeUpgradeWorkflow workflow =
        client.newWorkflowStub(
            NodeUpgradeWorkflow.class,
            WorkflowOptions.newBuilder()
                .setWorkflowId(id)
                .setTaskQueue(taskQueue)
                .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY)
                .build());
    try {
      WorkflowClient.start(workflow::upgrade, request);
      return WorkflowStub.fromTyped(workflow);
    } catch (WorkflowExecutionAlreadyStarted e) {
      return client.newUntypedWorkflowStub(id);
    }
  }
}
