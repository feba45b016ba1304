package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ChildReports;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.workflow.Async;
import io.temporal.workflow.ExternalWorkflowStub;
import io.temporal.workflow.Workflow;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * How a NodeUpgrade run tells its parent run that its node is staged ({@link ChildReports#nodeStaged}):
 * workflow code, shared by the saga and the stand-ins of its tests and benchmarks, so they all
 * signal the same way.
 */
public final class StagedReport {
  private static final Logger log = Workflow.getLogger(StagedReport.class);

  private StagedReport() {}

  /**
   * Signals the parent run (its exact run) on a thread of its own, so the caller goes on at once. A
   * run without a parent, or whose parent is gone, changes nothing: the signal only moves the
   * parent's scheduling.
   */
  public static void toParent(String node) {
    Optional<String> parentId = Workflow.getInfo().getParentWorkflowId();
    if (parentId.isEmpty()) {
      return;
    }
    WorkflowExecution.Builder parent = WorkflowExecution.newBuilder().setWorkflowId(parentId.get());
    Workflow.getInfo().getParentRunId().ifPresent(parent::setRunId);
    ExternalWorkflowStub stub = Workflow.newUntypedExternalWorkflowStub(parent.build());
    Async.procedure(() -> {
      try {
        stub.signal(ChildReports.NODE_STAGED, node);
      } catch (RuntimeException e) {
        log.warn("could not tell parent {} that {} is staged: {}", parentId.get(), node, e.toString());
      }
    });
  }
}
