package dev.inplace.starter;

import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.UpgradeControls;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowNotFoundException;
import io.temporal.client.WorkflowStub;
import java.io.PrintStream;
import java.util.Locale;

/** Finds a run by its workflow ID, reads its progress, and prints it as a table. */
final class RunViews {
  private RunViews() {}

  /**
   * {@code id} if it names a parent run (the operator Updates go to those only); a usage error
   * otherwise. Checked before the CLI connects, so a mistyped ID is exit 2 with nothing sent.
   */
  static String parentRunId(String id) {
    if (id.startsWith("cp-upgrade/") || id.startsWith("workers-upgrade/")) {
      return id;
    }
    throw new CliException("'" + id + "' is not a cp-upgrade/ or workers-upgrade/ workflow ID");
  }

  /**
   * {@code id} if it names a parent or a node run (they have a progress): a node run from a parent
   * or the custom resources ({@code node-upgrade/}) or from the CAPI hook ({@code node-upgrade-hook/},
   * the ID {@code describe cluster} shows for such a Machine); a usage error otherwise.
   */
  static String runId(String id) {
    if (isNodeRun(id) || id.startsWith("cp-upgrade/") || id.startsWith("workers-upgrade/")) {
      return id;
    }
    throw new CliException("'" + id + "' is not a cp-upgrade/, workers-upgrade/, node-upgrade/ or node-upgrade-hook/"
        + " workflow ID");
  }

  private static boolean isNodeRun(String id) {
    return id.startsWith("node-upgrade/") || id.startsWith("node-upgrade-hook/");
  }

  /**
   * A run's execution status; an {@link IllegalStateException} naming the ID (exit 1) when the
   * server has no such run, instead of the server's bare NOT_FOUND.
   */
  static WorkflowExecutionStatus status(WorkflowClient client, String id) {
    try {
      return client.newUntypedWorkflowStub(id).describe().getStatus();
    } catch (WorkflowNotFoundException e) {
      throw noSuchRun(id);
    } catch (StatusRuntimeException e) {
      if (e.getStatus().getCode() == Status.Code.NOT_FOUND) {
        throw noSuchRun(id);
      }
      throw e;
    }
  }

  /** Refuses an operator Update on a run that has ended: there is nothing left to control. */
  static void requireRunning(WorkflowClient client, String id, String command) {
    WorkflowExecutionStatus status = status(client, id);
    if (status != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) {
      throw new IllegalStateException("run " + id + " has ended (" + ended(status) + "): nothing to " + command);
    }
  }

  static String ended(WorkflowExecutionStatus status) {
    return status.name().replace("WORKFLOW_EXECUTION_STATUS_", "");
  }

  private static IllegalStateException noSuchRun(String id) {
    return new IllegalStateException("no run " + id + " on this Temporal namespace (check the ID with `inplace history`)");
  }

  /** The operator controls of a parent run; a usage error for any other ID. */
  static UpgradeControls controls(WorkflowClient client, String id) {
    if (parentRunId(id).startsWith("cp-upgrade/")) {
      return client.newWorkflowStub(ControlPlaneUpgradeWorkflow.class, id);
    }
    return client.newWorkflowStub(WorkersUpgradeWorkflow.class, id);
  }

  /** A parent run's {@link UpgradeProgress} or a node run's {@link NodeProgress}. */
  static Object progress(WorkflowClient client, String id) {
    if (isNodeRun(runId(id))) {
      return WorkflowStub.fromTyped(client.newWorkflowStub(NodeUpgradeWorkflow.class, id)).query("progress", NodeProgress.class);
    }
    return controls(client, id).progress();
  }

  static void printTable(PrintStream out, Object progress) {
    if (progress instanceof NodeProgress node) {
      printNode(out, node);
    } else {
      printRun(out, (UpgradeProgress) progress);
    }
  }

  private static void printRun(PrintStream out, UpgradeProgress p) {
    out.printf("%s %s -> %s: %s%s (%d/%d upgraded, %d failed, %d skipped, %d in flight, window %d)%n",
        p.kind(), p.cluster(), p.targetVersion(), p.phase(), p.paused() ? " (paused)" : "", p.upgraded(), p.total(),
        p.failed(), p.skipped(), p.inFlight(), p.window());
    if (p.message() != null && !p.message().isBlank()) {
      out.println("  " + p.message());
    }
    if (p.etcdSnapshot() != null && !p.etcdSnapshot().isBlank()) {
      out.println("  etcd snapshot: " + p.etcdSnapshot());
    }
    out.printf("  %-12s %-16s %-10s %s%n", "NODE", "PHASE", "STEP", "MESSAGE");
    for (NodeStatus n : p.nodes()) {
      out.printf("  %-12s %-16s %-10s %s%n", n.node(), n.phase(), n.step() == null ? "" : n.step().cliName(),
          n.message() == null ? "" : n.message());
    }
  }

  private static void printNode(PrintStream out, NodeProgress p) {
    out.printf("%s (%s): %s%s%n", p.nodeName(), p.machineName(), p.phase(),
        p.currentStep() == null ? "" : " at " + p.currentStep().cliName());
    for (StepRecord s : p.steps()) {
      out.printf("  %-10s %-8s %s%n", s.step().cliName(), s.status().name().toLowerCase(Locale.ROOT), s.message());
    }
  }
}
