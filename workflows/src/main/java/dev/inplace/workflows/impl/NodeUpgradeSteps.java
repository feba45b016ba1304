package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineVersionRequest;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities.BackupRequest;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.InstallRequest;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostActivities.ServiceRequest;
import dev.inplace.workflows.api.HostActivities.StageRequest;
import dev.inplace.workflows.api.HostActivities.UpgradeCommandRequest;
import dev.inplace.workflows.api.NodeActivities.AwaitNodeRequest;
import dev.inplace.workflows.api.NodeActivities.CordonRequest;
import dev.inplace.workflows.api.NodeActivities.CordonResult;
import dev.inplace.workflows.api.NodeActivities.DrainRequest;
import dev.inplace.workflows.api.NodeActivities.NodeRequest;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeActivities.UncordonRequest;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;

/**
 * The forward path of a NodeUpgrade: preflight (observe, then {@link NodePreflight}'s rules), then
 * stage, backup, cordon, drain, install, the distribution's upgrade command, restart and verify,
 * each risky step's compensation registered with {@link NodeRollback} before it runs; past verify,
 * uncordon and record. A node already at the target skips to the record. Runs from before
 * node-upgrade-backs-up-before-cordon (and not prepared ahead) back up after drain instead.
 */
final class NodeUpgradeSteps {
  private static final Logger log = Workflow.getLogger(NodeUpgradeWorkflowImpl.class);

  private final NodeStepLog steps;
  private final NodeActivityStubs stubs;
  private final NodeRollback rollback;
  private final boolean distributionSteps;
  private final NodePreflight.VersionMatch versionMatch;
  /** Whether the parent's permit has come; null when the run does not wait for one. */
  private final BooleanSupplier permit;
  /** Tells the parent the node is staged; null when the run does not report it. */
  private final Runnable staged;
  /** Whether the backup is taken before cordon even without a permit to wait for. */
  private final boolean backupBeforeCordon;
  /** Preflight's reads: at once from node-upgrade-preflight-reads-at-once on, else one after the other. */
  private final NodePreflightReads preflightReads;

  /**
   * {@code distributionSteps}: from node-upgrade-distribution-steps on (upgrade command, skew,
   * record); {@code versionMatch}: how the Node's version is held against the release; {@code
   * permit}: whether the parent's permit has come, null when the run does not wait for one
   * (node-upgrade-waits-for-permit); {@code staged}: tells the parent the node is staged, null when
   * the run does not (node-upgrade-reports-staged); {@code backupBeforeCordon}: the backup follows
   * the stage step in every run, not only in one prepared ahead (node-upgrade-backs-up-before-cordon);
   * {@code readsAtOnce}: preflight's three reads run at once (node-upgrade-preflight-reads-at-once).
   */
  NodeUpgradeSteps(NodeStepLog steps, NodeActivityStubs stubs, NodeRollback rollback, boolean distributionSteps,
      NodePreflight.VersionMatch versionMatch, BooleanSupplier permit, Runnable staged, boolean backupBeforeCordon,
      boolean readsAtOnce) {
    this.steps = steps;
    this.stubs = stubs;
    this.rollback = rollback;
    this.distributionSteps = distributionSteps;
    this.versionMatch = versionMatch;
    this.permit = permit;
    this.staged = staged;
    this.backupBeforeCordon = backupBeforeCordon;
    this.preflightReads = new NodePreflightReads(stubs, readsAtOnce);
  }

  NodeUpgradeResult run(NodeUpgradeRequest request) {
    steps.setPhase(NodePhase.UPGRADING);
    String owner = Workflow.getInfo().getWorkflowId();
    String nodeName = steps.nodeName();
    HostAccess host = request.hostAccess();
    NodeRequest nodeRequest = new NodeRequest(request.node().cluster(), nodeName);

    NodeState before;
    HostFacts facts;
    NodeVersions controlPlane;
    steps.begin(UpgradeStep.PREFLIGHT);
    try {
      NodePreflightReads.Observed observed = preflightReads.observe(
          request, nodeRequest, distributionSteps && request.node().role() == NodeRole.WORKER);
      before = observed.node();
      facts = observed.host();
      controlPlane = observed.controlPlane();
    } catch (ActivityFailure e) {
      steps.markFailed(UpgradeStep.PREFLIGHT, NodeStepResults.describe(e));
      throw steps.fail(UpgradeStep.PREFLIGHT, NodeStepResults.typeOf(e), NodeStepResults.describe(e), NodePhase.FAILED, null);
    }
    Optional<ApplicationFailure> refusal = NodePreflight.refusal(request, before, facts, versionMatch);
    if (refusal.isEmpty() && controlPlane != null) {
      refusal = NodePreflight.kubeletNewerThanControlPlane(request, before, facts, controlPlane, versionMatch);
    }
    if (refusal.isPresent()) {
      String why = refusal.get().getOriginalMessage();
      steps.markFailed(UpgradeStep.PREFLIGHT, why);
      throw steps.fail(UpgradeStep.PREFLIGHT, refusal.get().getType(), why, NodePhase.FAILED, before.kubeletVersion());
    }
    steps.finish(
        UpgradeStep.PREFLIGHT,
        StepStatus.DONE,
        "kubelet " + before.kubeletVersion() + ", host " + facts.arch() + ", "
            + facts.stagingFreeBytes() / (1024 * 1024) + " MiB free");

    if (NodePreflight.atTarget(request, before, facts, versionMatch)) {
      return finishAlreadyAtTarget(request, before, owner, nodeRequest);
    }

    List<InstalledFile> previous = NodePreflight.filesToKeep(request.artifacts(), facts.installed());
    UpgradeStep failedStep = UpgradeStep.STAGE;
    CordonResult cordon;
    try {
      steps.step(
          UpgradeStep.STAGE,
          () -> stubs.stager(NodeActivitySummaries.stage(request)).stageArtifacts(
              new StageRequest(host, request.profile(), request.artifacts(), request.distribution())),
          NodeStepResults::stage);
      if (staged != null) {
        staged.run();
      }
      // The backup copies the current files aside, which no workload sees, so it is done before
      // cordon: the node is out of service only for what must change it. A node prepared ahead
      // then waits for its turn, which starts at cordon.
      boolean backedUp = permit != null || backupBeforeCordon;
      if (backedUp) {
        failedStep = UpgradeStep.BACKUP;
        backup(request, host, previous);
      }
      if (permit != null) {
        awaitPermit(request, nodeRequest, before, facts);
      }

      failedStep = UpgradeStep.CORDON;
      rollback.register(
          UpgradeStep.RELEASE,
          () -> NodeStepResults.uncordon(stubs.nodes(NodeActivitySummaries.uncordon(request))
              .uncordonNode(new UncordonRequest(request.node().cluster(), nodeName, owner))));
      cordon =
          steps.step(
              UpgradeStep.CORDON,
              () -> stubs.nodes(NodeActivitySummaries.cordon(request))
                  .cordonNode(new CordonRequest(request.node().cluster(), nodeName, owner)),
              c -> c.cordonedByUs() ? "cordoned" : "already cordoned by someone else; left as is");

      failedStep = UpgradeStep.DRAIN;
      var drainer = stubs.drainer(request);
      steps.step(
          UpgradeStep.DRAIN,
          () -> drainer.drainNode(new DrainRequest(request.node().cluster(), nodeName, request.drain())),
          NodeStepResults::drain);

      failedStep = UpgradeStep.BACKUP;
      boolean[] serviceTouched = {false};
      rollback.register(UpgradeStep.RESTORE, () -> rollback.restore(request, host, previous, before, serviceTouched[0]));
      if (!backedUp) {
        backup(request, host, previous);
      }

      failedStep = UpgradeStep.INSTALL;
      steps.step(
          UpgradeStep.INSTALL,
          () -> stubs.hosts(NodeActivitySummaries.install(request)).installArtifacts(
              new InstallRequest(host, request.profile(), request.artifacts(), request.distribution())),
          i -> "installed " + NodeStepResults.joined(i.installed(), i.alreadyInstalled()));

      if (distributionSteps && request.distribution().hasUpgradeCommand()) {
        failedStep = UpgradeStep.UPGRADE;
        // kubeadm rewrites the kubelet's configuration: the rollback restarts the kubelet in any case.
        serviceTouched[0] = true;
        rollback.upgradeCommandStarted();
        var upgrader = stubs.upgrader(request);
        steps.step(
            UpgradeStep.UPGRADE,
            () -> upgrader.runUpgradeCommand(
                new UpgradeCommandRequest(
                    host, request.distribution(), request.profile(), request.node().role(),
                    request.targetVersion(), request.firstControlPlane())),
            NodeStepResults::upgradeCommand);
      }

      failedStep = UpgradeStep.RESTART;
      serviceTouched[0] = true;
      steps.step(
          UpgradeStep.RESTART,
          () -> stubs.hosts(NodeActivitySummaries.restart(request))
              .restartService(new ServiceRequest(host, request.serviceName(), request.distribution())),
          r -> r.service() + (r.active() ? " active" : " not active"));

      failedStep = UpgradeStep.VERIFY;
      var verifier = stubs.verifier(request, request.targetVersion());
      steps.step(
          UpgradeStep.VERIFY,
          () -> verifier.awaitNodeVersion(
              new AwaitNodeRequest(
                  request.node().cluster(), nodeName, request.targetVersion(), request.readyTimeoutSeconds())),
          s -> "Ready at " + s.kubeletVersion());

    } catch (ActivityFailure | CanceledFailure e) {
      throw rollback.rollBack(request, failedStep, e, before);
    }

    rollback.clear();
    try {
      steps.step(
          UpgradeStep.UNCORDON,
          () -> cordon.cordonedByUs()
              ? NodeStepResults.uncordon(stubs.nodes(NodeActivitySummaries.uncordon(request))
                  .uncordonNode(new UncordonRequest(request.node().cluster(), nodeName, owner)))
              : "left cordoned: it was cordoned before this run",
          s -> s);
      recordVersion(request);
    } catch (ActivityFailure e) {
      UpgradeStep failed = steps.currentStep();
      steps.markFailed(failed, NodeStepResults.describe(e));
      throw steps.fail(failed, NodeStepResults.typeOf(e), "node runs " + request.targetVersion() + " but "
          + failed.cliName() + " failed: " + NodeStepResults.describe(e), NodePhase.FAILED, request.targetVersion());
    }
    steps.setPhase(NodePhase.UPGRADED);
    steps.message("upgraded " + before.kubeletVersion() + " -> " + request.targetVersion());
    steps.publishDetails();
    log.info("node {} upgraded to {}", nodeName, request.targetVersion());
    return new NodeUpgradeResult(
        steps.machineName(), nodeName, before.kubeletVersion(), request.targetVersion(), false, steps.steps());
  }

  private void backup(NodeUpgradeRequest request, HostAccess host, List<InstalledFile> previous) {
    steps.step(
        UpgradeStep.BACKUP,
        () -> stubs.hosts(NodeActivitySummaries.backup(request))
            .backupBinaries(new BackupRequest(host, request.profile(), previous, request.distribution())),
        b -> "kept " + NodeStepResults.joined(b.backedUp(), b.alreadyBackedUp()));
  }

  /**
   * Prepared (preflight, stage and backup done, nothing changed outside the staging and backup
   * dirs): waits for the
   * parent's permit, then looks at the Node again, so a preflight that went stale while it waited
   * never lets it through. A run stood down (cancelled) while it waits ends with nothing changed.
   * Throws the run's failure; never an {@link ActivityFailure} or {@link CanceledFailure}, which
   * would start a rollback there is nothing to roll back for.
   */
  private void awaitPermit(NodeUpgradeRequest request, NodeRequest nodeRequest, NodeState before, HostFacts facts) {
    steps.message("prepared: waiting for the parent's permit before cordon");
    steps.publishDetails();
    String nothingChanged = "nothing was changed on the node (the release staged in "
        + request.profile().stagingDir() + " and the backup in " + request.profile().backupDir()
        + " stay there for the next run)";
    NodeState now;
    try {
      Workflow.await(permit::getAsBoolean);
      now = stubs.nodes(NodeActivitySummaries.inspectNodeAgain(request)).inspectNode(nodeRequest);
    } catch (CanceledFailure | ActivityFailure e) {
      if (Failures.isCancellation(e)) {
        // No step failed: the run was stood down (its parent paused, halted, aborted or was cancelled).
        throw steps.fail(null, UpgradeFailures.CANCELLED, "stood down before its turn: " + nothingChanged,
            NodePhase.FAILED, before.kubeletVersion());
      }
      ActivityFailure failure = (ActivityFailure) e;
      String why = "looking at the Node again when its turn came failed: " + NodeStepResults.describe(failure);
      steps.markFailed(UpgradeStep.PREFLIGHT, why);
      throw steps.fail(UpgradeStep.PREFLIGHT, NodeStepResults.typeOf(failure), why + "; " + nothingChanged, NodePhase.FAILED,
          before.kubeletVersion());
    }
    Optional<ApplicationFailure> refusal = NodePreflight.changedWhileWaiting(request, before, now, facts, versionMatch);
    if (refusal.isPresent()) {
      String why = refusal.get().getOriginalMessage() + " (looked again when its turn came)";
      steps.markFailed(UpgradeStep.PREFLIGHT, why);
      throw steps.fail(UpgradeStep.PREFLIGHT, refusal.get().getType(), why + "; " + nothingChanged, NodePhase.FAILED,
          now.kubeletVersion());
    }
    steps.message("permitted: Node " + steps.nodeName() + " still Ready at " + now.kubeletVersion());
  }

  private NodeUpgradeResult finishAlreadyAtTarget(
      NodeUpgradeRequest request, NodeState before, String owner, NodeRequest nodeRequest) {
    List<UpgradeStep> skipped = new ArrayList<>(backupBeforeCordon
        ? List.of(UpgradeStep.STAGE, UpgradeStep.BACKUP, UpgradeStep.CORDON, UpgradeStep.DRAIN,
            UpgradeStep.INSTALL, UpgradeStep.RESTART, UpgradeStep.VERIFY)
        : List.of(UpgradeStep.STAGE, UpgradeStep.CORDON, UpgradeStep.DRAIN, UpgradeStep.BACKUP,
            UpgradeStep.INSTALL, UpgradeStep.RESTART, UpgradeStep.VERIFY));
    if (distributionSteps && request.distribution().hasUpgradeCommand()) {
      skipped.add(skipped.indexOf(UpgradeStep.INSTALL) + 1, UpgradeStep.UPGRADE);
    }
    for (UpgradeStep s : skipped) {
      steps.begin(s);
      steps.finish(s, StepStatus.SKIPPED, "already at " + request.targetVersion());
    }
    // An earlier run of this workflow ID may have died between verify and uncordon.
    if (owner.equals(before.cordonedBy())) {
      steps.step(
          UpgradeStep.UNCORDON,
          () -> NodeStepResults.uncordon(stubs.nodes(NodeActivitySummaries.uncordon(request))
              .uncordonNode(new UncordonRequest(nodeRequest.cluster(), steps.nodeName(), owner))),
          s -> s);
    } else {
      steps.begin(UpgradeStep.UNCORDON);
      steps.finish(UpgradeStep.UNCORDON, StepStatus.SKIPPED, "not cordoned by this run");
    }
    recordVersion(request);
    steps.setPhase(NodePhase.UPGRADED);
    steps.message("already at " + request.targetVersion());
    steps.publishDetails();
    return new NodeUpgradeResult(
        steps.machineName(), steps.nodeName(), before.kubeletVersion(), request.targetVersion(), true, steps.steps());
  }

  private void recordVersion(NodeUpgradeRequest request) {
    String namespace = request.node().cluster().namespace();
    if (distributionSteps) {
      steps.step(
          UpgradeStep.RECORD,
          () -> stubs.capi(NodeActivitySummaries.record(request)).recordMachineUpgrade(
              new MachineRecordRequest(namespace, steps.machineName(), request.targetVersion(),
                  request.distribution(), request.node().role())),
          r -> r.patches().isEmpty() ? "Machine already recorded" : String.join("; ", r.patches()));
      return;
    }
    steps.step(
        UpgradeStep.RECORD,
        () -> stubs.capi(NodeActivitySummaries.record(request)).recordMachineVersion(
            new MachineVersionRequest(namespace, steps.machineName(), request.targetVersion())),
        r -> r.changed()
            ? "Machine.spec.version " + r.previousVersion() + " -> " + request.targetVersion()
            : "Machine already recorded");
  }
}
