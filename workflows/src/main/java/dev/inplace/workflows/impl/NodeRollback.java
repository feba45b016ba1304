package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostActivities.RestoreRequest;
import dev.inplace.workflows.api.HostActivities.RestoreResult;
import dev.inplace.workflows.api.HostActivities.ServiceRequest;
import dev.inplace.workflows.api.NodeActivities.AwaitNodeRequest;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.TemporalFailure;
import io.temporal.workflow.Workflow;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.List;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The undo side of the NodeUpgrade saga. Each compensation is registered before the step it undoes
 * (a step that timed out may still have acted); on failure or cancellation they run in reverse in
 * a detached cancellation scope, and stop at the first that fails, leaving the node cordoned.
 */
final class NodeRollback {
  private static final Logger log = Workflow.getLogger(NodeUpgradeWorkflowImpl.class);

  /** An undo action, with the step it is recorded under. */
  private record Compensation(UpgradeStep step, Supplier<String> action) {}

  private final Deque<Compensation> compensations = new ArrayDeque<>();
  private final NodeStepLog steps;
  private final NodeActivityStubs stubs;
  /** Set once the distribution's upgrade command has started: the rollback then says what it left. */
  private boolean upgradeCommandStarted;

  NodeRollback(NodeStepLog steps, NodeActivityStubs stubs) {
    this.steps = steps;
    this.stubs = stubs;
  }

  /** Registers an undo action, recorded under {@code step} when it runs. */
  void register(UpgradeStep step, Supplier<String> action) {
    compensations.push(new Compensation(step, action));
  }

  /** Past verify the node runs the target: nothing is rolled back any more. */
  void clear() {
    compensations.clear();
  }

  void upgradeCommandStarted() {
    upgradeCommandStarted = true;
  }

  /** Compensation for backup..verify: put the previous files back and wait for the old version. */
  String restore(
      NodeUpgradeRequest request, HostAccess host, List<InstalledFile> previous, NodeState before, boolean serviceTouched) {
    RestoreResult restored =
        stubs.hosts(NodeActivitySummaries.restore(request)).restoreBinaries(
            new RestoreRequest(host, request.profile(), previous, request.artifacts(), request.distribution()));
    if (!restored.changed() && !serviceTouched) {
      return "nothing to restore";
    }
    stubs.hosts(NodeActivitySummaries.restart(request))
        .restartService(new ServiceRequest(host, request.serviceName(), request.distribution()));
    NodeState back =
        stubs.verifier(request, before.kubeletVersion()).awaitNodeVersion(
            new AwaitNodeRequest(
                request.node().cluster(), steps.nodeName(), before.kubeletVersion(), request.readyTimeoutSeconds()));
    return "restored " + NodeStepResults.joined(restored.restored(), restored.removed())
        + "; Ready at " + back.kubeletVersion();
  }

  /** Runs the compensations in reverse, detached from cancellation, and builds the failure to throw. */
  ApplicationFailure rollBack(NodeUpgradeRequest request, UpgradeStep failedStep, TemporalFailure cause, NodeState before) {
    boolean cancelled = cause instanceof CanceledFailure || cause.getCause() instanceof CanceledFailure;
    String reason = cancelled ? UpgradeFailures.CANCELLED : NodeStepResults.typeOf(cause);
    String why = cancelled ? "run cancelled" : NodeStepResults.describe(cause);
    steps.markFailed(failedStep, why);
    steps.setPhase(NodePhase.ROLLING_BACK);
    steps.message(failedStep.cliName() + " failed: " + why + "; rolling back");
    log.warn("node {} failed at {} ({}): rolling back", steps.nodeName(), failedStep.cliName(), reason);

    if (compensations.isEmpty()) {
      return steps.fail(failedStep, reason, failedStep.cliName() + " failed: " + why + "; nothing was changed on the node",
          NodePhase.FAILED, before.kubeletVersion());
    }
    String[] rollbackError = {null};
    Workflow.newDetachedCancellationScope(
            () -> {
              while (!compensations.isEmpty()) {
                Compensation c = compensations.pop();
                steps.begin(c.step());
                try {
                  steps.finish(c.step(), StepStatus.DONE, c.action().get());
                } catch (ActivityFailure e) {
                  steps.markFailed(c.step(), NodeStepResults.describe(e));
                  rollbackError[0] = c.step().cliName() + " failed: " + NodeStepResults.describe(e);
                  return; // never uncordon a node whose rollback did not complete
                }
              }
            })
        .run();

    if (rollbackError[0] != null) {
      String text = failedStep.cliName() + " failed (" + why + "), then " + rollbackError[0]
          + "; node left cordoned for an operator" + staticPodNote(request);
      return steps.fail(failedStep, UpgradeFailures.ROLLBACK_FAILED, text, NodePhase.ROLLBACK_FAILED, null);
    }
    String text = failedStep.cliName() + " failed: " + why + "; rolled back to " + before.kubeletVersion()
        + staticPodNote(request);
    return steps.fail(failedStep, reason, text, NodePhase.ROLLED_BACK, before.kubeletVersion());
  }

  /**
   * What a rollback does not undo on a control plane once {@code kubeadm upgrade apply|node} has
   * started: its static pods. kubeadm rolls back a component that fails to come up and keeps the
   * previous manifests and etcd data; the failure says so instead of claiming more.
   */
  private String staticPodNote(NodeUpgradeRequest request) {
    if (!upgradeCommandStarted || request.node().role() != NodeRole.CONTROL_PLANE) {
      return "";
    }
    String command = request.firstControlPlane() ? "kubeadm upgrade apply" : "kubeadm upgrade node";
    return "; " + command + " had started on this control plane: kubeadm, kubelet and kubectl were put back"
        + " and the kubelet restarted, but the static pods were left to kubeadm, which rolls back a component"
        + " that fails to come up and keeps the previous manifests and etcd data in"
        + " /etc/kubernetes/tmp/kubeadm-backup-manifests-* and kubeadm-backup-etcd-* on " + steps.nodeName()
        + "; check the static pods' image tags before retrying";
  }
}
