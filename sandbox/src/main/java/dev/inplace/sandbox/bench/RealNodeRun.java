package dev.inplace.sandbox.bench;

import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoRun;
import dev.inplace.sandbox.demo.DemoSummary;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.WorkflowIds;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * One worker node upgraded for real, for the bench's action count: the demo's estate of one control
 * plane and one worker (real SSH to its host, drain, restart, verify, bookkeeping) with the product's
 * worker in this process, on an embedded Temporal server. The bench's own pool replaces each node's
 * upgrade by a timer; what a real NodeUpgrade run costs is counted from this run's history.
 */
final class RealNodeRun {
  private RealNodeRun() {}

  /** The actions of the worker node's NodeUpgrade run (its whole history, as the SDK fetches it). */
  static BillableActions workerNodeActions() throws IOException {
    DemoOptions options = DemoOptions.parse("--control-planes", "1", "--pools", "1", "--workers", "1");
    Path dir = Files.createTempDirectory("inplace-bench-node-");
    try (Estate estate = Estate.create(dir, options.estateSpec());
        TemporalConnection temporal = EmbeddedTemporal.start();
        InplaceWorker worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, estate.workerManagement(),
            dir.resolve("artifact-cache"), estate.artifactPolicy())) {
      DemoSummary summary = new DemoRun(estate, temporal.client(), WorkflowIds.TASK_QUEUE, options,
          new PrintStream(OutputStream.nullOutputStream())).run();
      if (!summary.allUpgraded()) {
        throw new IllegalStateException("the real node upgrade counted by the bench did not upgrade every node: "
            + summary.results());
      }
      Estate.EstateNode node = estate.nodes().stream().filter(n -> n.role() == NodeRole.WORKER).findFirst()
          .orElseThrow(() -> new IllegalStateException("the bench's estate has no worker node"));
      String workflowId = WorkflowIds.nodeUpgrade(Estate.NAMESPACE, node.machine(), options.to());
      return new BillableActions().add(temporal.client().fetchHistory(workflowId).getEvents());
    } finally {
      LocalStack.deleteTree(dir);
    }
  }
}
