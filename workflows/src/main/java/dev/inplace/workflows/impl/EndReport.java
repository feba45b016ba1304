package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.common.converter.DataConverterException;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * How a NodeUpgrade run tells its parent's workflow how it ended ({@link
 * WorkersUpgradeWorkflow#nodeEnded}): workflow code, shared by the saga and the stand-ins of its
 * tests and benchmarks, so they all report the same way. The report goes to the parent's workflow
 * ID, not to the run that started the child: that run may have continued as new and handed the
 * child over. It is sent before the run ends and waited for, so a child whose run is closed has
 * reported; a parent that is gone changes nothing.
 */
public final class EndReport {
  private static final Logger log = Workflow.getLogger(EndReport.class);

  private EndReport() {}

  /**
   * Runs {@code upgrade} and, when {@code reports}, tells the parent's workflow how it ended: its
   * result, or the failure (or cancellation) it ends with, which is then rethrown as it was.
   */
  public static NodeUpgradeResult around(String node, boolean reports, Supplier<NodeUpgradeResult> upgrade) {
    if (!reports) {
      return upgrade.get();
    }
    String self = Workflow.getInfo().getWorkflowId();
    String run = Workflow.getInfo().getRunId();
    NodeUpgradeResult result;
    try {
      result = upgrade.get();
    } catch (ApplicationFailure e) {
      toParent(new NodeEnd(node, self, run, null, e.getType(), e.getOriginalMessage(), failureOf(e)));
      throw e;
    } catch (CanceledFailure e) {
      toParent(new NodeEnd(node, self, run, null, UpgradeFailures.CANCELLED, "cancelled", null));
      throw e;
    }
    toParent(new NodeEnd(node, self, run, result, null, null, null));
    return result;
  }

  private static void toParent(NodeEnd end) {
    Optional<String> parentId = Workflow.getInfo().getParentWorkflowId();
    if (parentId.isEmpty()) {
      return;
    }
    // Detached: a cancelled run reports its end too.
    Workflow.newDetachedCancellationScope(() -> {
      try {
        Workflow.newUntypedExternalWorkflowStub(parentId.get()).signal(WorkersUpgradeWorkflow.NODE_ENDED, end);
      } catch (RuntimeException e) {
        log.warn("could not tell parent {} how {} ended: {}", parentId.get(), end.node(), e.toString());
      }
    }).run();
  }

  private static NodeFailure failureOf(ApplicationFailure e) {
    if (e.getDetails() == null || e.getDetails().getSize() == 0) {
      return null;
    }
    try {
      return e.getDetails().get(NodeFailure.class);
    } catch (DataConverterException notOne) {
      return null;
    }
  }
}
