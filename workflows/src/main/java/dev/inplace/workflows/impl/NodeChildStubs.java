package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import io.temporal.api.enums.v1.ParentClosePolicy;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.common.SearchAttributes;
import io.temporal.workflow.ChildWorkflowOptions;
import io.temporal.workflow.Workflow;
import java.util.List;

/** The stub a parent run starts a node's NodeUpgrade child with: its ID, policies, search attributes and descriptions. */
final class NodeChildStubs {
  private NodeChildStubs() {}

  /**
   * @param describeChildren start it with {@link ChildRunDescription}'s summary and details (else a shorter summary)
   * @param handedOverIfNeeded the child must outlive its parent's run (a run that hands its children
   *     over at continue-as-new): parent close policy abandon instead of request-cancel
   */
  static NodeUpgradeWorkflow stub(
      String kind, ClusterRef cluster, String target, MachineInfo machine, String childId, NodeUpgradeRequest request,
      boolean describeChildren, boolean handedOverIfNeeded) {
    SearchAttributes attributes =
        SearchAttributes.newBuilder()
            .set(RunSearchAttributes.CLUSTER, cluster.toString())
            .set(RunSearchAttributes.KIND, RunSearchAttributes.KIND_NODE)
            .set(RunSearchAttributes.TARGET_VERSION, target)
            .set(RunSearchAttributes.NODE, List.of(machine.nodeName()))
            .set(RunSearchAttributes.PHASE, RunPhase.UPGRADING.name())
            .build();
    ChildWorkflowOptions.Builder options =
        ChildWorkflowOptions.newBuilder()
            .setWorkflowId(childId)
            // A retry after a failure reuses the ID; a node upgraded once is never upgraded again.
            .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_ALLOW_DUPLICATE_FAILED_ONLY)
            // Cancelling or terminating the parent lets each child compensate; a child handed over
            // at continue-as-new must outlive its run (the run's cancellation still cancels it).
            .setParentClosePolicy(handedOverIfNeeded
                ? ParentClosePolicy.PARENT_CLOSE_POLICY_ABANDON
                : ParentClosePolicy.PARENT_CLOSE_POLICY_REQUEST_CANCEL)
            .setTypedSearchAttributes(attributes);
    if (describeChildren) {
      ChildRunDescription description = ChildRunDescription.of(
          machine, request, kind, Workflow.getInfo().getWorkflowId());
      options.setStaticSummary(description.summary()).setStaticDetails(description.details());
    } else {
      options.setStaticSummary("Upgrade " + machine.nodeName() + " (" + machine.name() + ") to " + target);
    }
    return Workflow.newChildWorkflowStub(NodeUpgradeWorkflow.class, options.build());
  }
}
