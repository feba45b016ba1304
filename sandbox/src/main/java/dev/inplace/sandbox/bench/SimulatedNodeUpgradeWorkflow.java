package dev.inplace.sandbox.bench;

import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.impl.EndReport;
import dev.inplace.workflows.impl.StagedReport;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.List;

/**
 * The benchmark's stand-in for a node's upgrade: a durable timer of fixed length. It isolates what
 * the benchmark measures (the parent's scheduling, history size and continue-as-new) from SSH and
 * API-server speed. A child asked to wait for its parent's permit (a parent that prepares ahead)
 * prepares in no time, waits for the permit, then takes its time; one asked to report staging
 * tells its parent at once (before a permit it waits for). Never registered by the product's worker.
 */
public class SimulatedNodeUpgradeWorkflow implements NodeUpgradeWorkflow {
  private final Duration perNode;
  private NodePhase phase = NodePhase.PENDING;
  private String node = "";
  private boolean permitted;

  public SimulatedNodeUpgradeWorkflow(Duration perNode) {
    this.perNode = perNode;
  }

  @Override
  public NodeUpgradeResult upgrade(NodeUpgradeRequest request) {
    // A parent that hands its children over at continue-as-new follows them by their end reports.
    return EndReport.around(request.node().nodeName(), request.reportEnd(), () -> run(request));
  }

  private NodeUpgradeResult run(NodeUpgradeRequest request) {
    node = request.node().nodeName();
    phase = NodePhase.UPGRADING;
    if (request.reportStaged()) {
      // Stages in no time too; tells the parent as the real saga does (before a permit it waits
      // for), without waiting for the signal to land.
      StagedReport.toParent(node);
    }
    if (request.awaitPermit()) {
      Workflow.await(() -> permitted);
    }
    Workflow.sleep(perNode);
    phase = NodePhase.UPGRADED;
    return new NodeUpgradeResult(request.node().machineName(), node, "", request.targetVersion(), false, List.of());
  }

  @Override
  public void permit() {
    permitted = true;
  }

  @Override
  public NodeProgress progress() {
    return new NodeProgress("", node, phase, null, List.of(), "");
  }
}
