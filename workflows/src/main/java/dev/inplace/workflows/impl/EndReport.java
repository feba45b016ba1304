package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * How a NodeUpgrade run tells its parent's workflow how it ended ({@link
 * WorkersUpgradeWorkflow#nodeEnded}): workflow code, shared by the saga and the stand-ins of its
 * tests and benchmarks, so they all report the same way. The report goes to the parent's workflow
 * ID, not to the run that started the child: that run may have continued as new and handed the
 * child over. It is sent before the run ends and waited for, so a child whose run is closed has
 * reported. A signal that fails is tried again a second later, up to {@link #ATTEMPTS} times (a
 * parent's workflow between two runs); a parent that is gone changes nothing.
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
      toParent(new NodeEnd(node, self, run, null, e.getType(), e.getOriginalMessage(), ChildOutcomes.nodeFailure(e)));
      throw e;
    } catch (CanceledFailure e) {
      toParent(new NodeEnd(node, self, run, null, UpgradeFailures.CANCELLED, "cancelled", null));
      throw e;
    }
    toParent(new NodeEnd(node, self, run, result, null, null, null));
    return result;
  }

  /** Signals a report a parent's workflow may be between two runs for: tried this often, a second apart. */
  static final int ATTEMPTS = 10;

  private static void toParent(NodeEnd end) {
    Optional<String> parentId = Workflow.getInfo().getParentWorkflowId();
    if (parentId.isEmpty()) {
      return;
    }
    // Detached: a cancelled run reports its end too.
    Workflow.newDetachedCancellationScope(() -> {
      for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
        try {
          Workflow.newUntypedExternalWorkflowStub(parentId.get()).signal(WorkersUpgradeWorkflow.NODE_ENDED, end);
          return;
        } catch (RuntimeException e) {
          // The parent's workflow between its runs (Temporal's test server is not atomic there), or gone.
          log.warn("could not tell parent {} how {} ended (attempt {} of {}): {}", parentId.get(), end.node(), attempt,
              ATTEMPTS, e.toString());
          if (attempt < ATTEMPTS) {
            Workflow.sleep(Duration.ofSeconds(1));
          }
        }
      }
    }).run();
  }
}
