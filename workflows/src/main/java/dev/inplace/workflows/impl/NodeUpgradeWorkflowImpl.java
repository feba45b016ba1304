package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineVersionRequest;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.BackupRequest;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.HostInspectRequest;
import dev.inplace.workflows.api.HostActivities.InstallRequest;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostActivities.RestoreRequest;
import dev.inplace.workflows.api.HostActivities.RestoreResult;
import dev.inplace.workflows.api.HostActivities.ServiceRequest;
import dev.inplace.workflows.api.HostActivities.StageRequest;
import dev.inplace.workflows.api.HostActivities.StageResult;
import dev.inplace.workflows.api.HostActivities.UpgradeCommandRequest;
import dev.inplace.workflows.api.HostActivities.UpgradeCommandResult;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.AwaitNodeRequest;
import dev.inplace.workflows.api.NodeActivities.CordonRequest;
import dev.inplace.workflows.api.NodeActivities.CordonResult;
import dev.inplace.workflows.api.NodeActivities.DrainRequest;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.NodeRequest;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeActivities.UncordonRequest;
import dev.inplace.workflows.api.NodeActivities.UncordonResult;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.SearchAttributes;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.TemporalFailure;
import io.temporal.failure.TimeoutFailure;
import io.temporal.workflow.Workflow;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;
import org.slf4j.Logger;

/**
 * The NodeUpgrade saga. Steps run in order; each compensation is registered before the step it
 * undoes (a step that timed out may still have acted), and compensations run in reverse in a
 * detached cancellation scope so they also run when the workflow is cancelled.
 */
public class NodeUpgradeWorkflowImpl implements NodeUpgradeWorkflow {
  private static final Logger log = Workflow.getLogger(NodeUpgradeWorkflowImpl.class);

  private final HostActivities hosts =
      Workflow.newActivityStub(
          HostActivities.class,
          ActivityOptionsCatalog.hostStep(),
          Map.of("StageArtifacts", ActivityOptionsCatalog.staging()));
  private final NodeActivities nodes =
      Workflow.newActivityStub(NodeActivities.class, ActivityOptionsCatalog.kubeCall());
  private final ClusterApiActivities clusterApi =
      Workflow.newActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.kubeCall());

  /** Change ID: runs from this version on upsert their search attributes as they move. */
  static final String SEARCH_ATTRIBUTES_CHANGE = "node-upgrade-search-attributes";

  /**
   * Change ID: runs from this version on run the distribution's upgrade command (kubeadm), refuse a
   * worker whose new kubelet would be newer than the control plane, and record the node through
   * the distribution's bookkeeping (recordMachineUpgrade).
   */
  static final String DISTRIBUTION_STEPS_CHANGE = "node-upgrade-distribution-steps";

  /**
   * Change ID: a run whose request asks it ({@code markMachine}, the runtime-extension path, where no
   * parent marks the Machine) marks its Machine skip-remediation with its workflow ID as the value
   * before anything else, and removes that mark (only its own) when it ends, whatever the outcome.
   */
  static final String OWN_MACHINE_MARK_CHANGE = "node-upgrade-own-machine-mark";

  /**
   * Change ID: runs from this version on refuse, before any activity, a release whose sources or
   * install paths break the catalogue rules (a run started by hand skips the intake's checks).
   */
  static final String CATALOGUE_RULES_CHANGE = "node-upgrade-catalogue-rules";

  /**
   * Change ID: runs from this version on give every activity call a summary for the Temporal UI
   * ({@link NodeActivitySummaries}); the commands' user metadata changes, nothing else.
   */
  static final String UI_SUMMARIES_CHANGE = "node-upgrade-ui-summaries";

  private final List<StepRecord> steps = new ArrayList<>();
  private boolean upsertSearchAttributes;
  private boolean distributionSteps;
  private boolean uiSummaries;
  /** Set once the distribution's upgrade command has started: the rollback then says what it left. */
  private boolean upgradeCommandStarted;
  private final Deque<Compensation> compensations = new ArrayDeque<>();
  private String machineName = "";
  private String nodeName = "";
  private NodePhase phase = NodePhase.PENDING;
  private UpgradeStep currentStep;
  private String message = "";

  /** An undo action, with the step it is recorded under. */
  private record Compensation(UpgradeStep step, Supplier<String> action) {}

  @Override
  public NodeProgress progress() {
    return new NodeProgress(
        machineName, nodeName, phase, currentStep, List.copyOf(steps), message);
  }

  @Override
  public NodeUpgradeResult upgrade(NodeUpgradeRequest request) {
    machineName = request.node().machineName();
    nodeName = request.node().nodeName();
    upsertSearchAttributes =
        Workflow.getVersion(SEARCH_ATTRIBUTES_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    if (upsertSearchAttributes) {
      Workflow.upsertTypedSearchAttributes(
          SearchAttributes.CLUSTER.valueSet(request.node().cluster().toString()),
          SearchAttributes.KIND.valueSet(SearchAttributes.KIND_NODE),
          SearchAttributes.TARGET_VERSION.valueSet(request.targetVersion()),
          SearchAttributes.NODE.valueSet(List.of(nodeName)));
    }
    distributionSteps =
        Workflow.getVersion(DISTRIBUTION_STEPS_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    // Before anything is marked or read: a run started by hand skips the intake's checks.
    if (Workflow.getVersion(CATALOGUE_RULES_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1) {
      Optional<ApplicationFailure> unsafe = NodePreflight.catalogueRefusal(request);
      if (unsafe.isPresent()) {
        begin(UpgradeStep.PREFLIGHT);
        String why = unsafe.get().getOriginalMessage();
        markFailed(UpgradeStep.PREFLIGHT, why);
        throw fail(UpgradeStep.PREFLIGHT, unsafe.get().getType(), why, NodePhase.FAILED, null);
      }
    }
    uiSummaries = Workflow.getVersion(UI_SUMMARIES_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    if (request.markMachine()
        && Workflow.getVersion(OWN_MACHINE_MARK_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1) {
      return upgradeMarked(request);
    }
    return upgradeNode(request);
  }

  /**
   * Marks the Machine (skip-remediation, owned by this run) around the whole upgrade, so a
   * MachineHealthCheck does not replace the node while it is drained and restarted; the mark is
   * removed after success, failure or cancellation alike, detached from the cancellation.
   */
  private NodeUpgradeResult upgradeMarked(NodeUpgradeRequest request) {
    String owner = Workflow.getInfo().getWorkflowId();
    String namespace = request.node().cluster().namespace();
    try {
      capiFor(NodeActivitySummaries.mark(request, true))
          .markMachineUpgrading(new MachineMarkRequest(namespace, machineName, true, owner));
    } catch (ActivityFailure e) {
      begin(UpgradeStep.PREFLIGHT);
      String why = "could not mark Machine " + machineName + " (" + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION
          + "): " + describe(e) + "; nothing was changed";
      markFailed(UpgradeStep.PREFLIGHT, why);
      throw fail(UpgradeStep.PREFLIGHT, typeOf(e), why, NodePhase.FAILED, null);
    }
    try {
      return upgradeNode(request);
    } finally {
      try {
        Workflow.newDetachedCancellationScope(
                () -> capiFor(NodeActivitySummaries.mark(request, false))
                    .markMachineUpgrading(new MachineMarkRequest(namespace, machineName, false, owner)))
            .run();
      } catch (ActivityFailure e) {
        log.warn("could not remove {} from Machine {}: {}", ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION,
            machineName, describe(e));
        message = message + "; warning: could not remove " + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION
            + " from Machine " + machineName + ": " + describe(e);
      }
    }
  }

  private NodeUpgradeResult upgradeNode(NodeUpgradeRequest request) {
    setPhase(NodePhase.UPGRADING);
    String owner = Workflow.getInfo().getWorkflowId();
    HostAccess host = request.hostAccess();
    NodeRequest nodeRequest = new NodeRequest(request.node().cluster(), nodeName);

    NodeState before;
    HostFacts facts;
    NodeVersions controlPlane = null;
    begin(UpgradeStep.PREFLIGHT);
    try {
      before = nodesFor(NodeActivitySummaries.inspectNode(request)).inspectNode(nodeRequest);
      facts =
          hostsFor(NodeActivitySummaries.inspectHost(request)).inspectHost(
              new HostInspectRequest(
                  host,
                  request.distribution(),
                  request.node().role(),
                  request.profile(),
                  request.artifacts()));
      if (distributionSteps && request.node().role() == NodeRole.WORKER) {
        controlPlane = nodesFor(NodeActivitySummaries.controlPlaneVersions(request))
            .controlPlaneVersions(request.node().cluster());
      }
    } catch (ActivityFailure e) {
      markFailed(UpgradeStep.PREFLIGHT, describe(e));
      throw fail(UpgradeStep.PREFLIGHT, typeOf(e), describe(e), NodePhase.FAILED, null);
    }
    Optional<ApplicationFailure> refusal = NodePreflight.refusal(request, before, facts);
    if (refusal.isEmpty() && controlPlane != null) {
      refusal = NodePreflight.kubeletNewerThanControlPlane(request, before, facts, controlPlane);
    }
    if (refusal.isPresent()) {
      String why = refusal.get().getOriginalMessage();
      markFailed(UpgradeStep.PREFLIGHT, why);
      throw fail(UpgradeStep.PREFLIGHT, refusal.get().getType(), why, NodePhase.FAILED, before.kubeletVersion());
    }
    finish(
        UpgradeStep.PREFLIGHT,
        StepStatus.DONE,
        "kubelet " + before.kubeletVersion() + ", host " + facts.arch() + ", "
            + facts.stagingFreeBytes() / (1024 * 1024) + " MiB free");

    if (NodePreflight.atTarget(request, before, facts)) {
      return finishAlreadyAtTarget(request, before, owner, nodeRequest);
    }

    List<InstalledFile> previous = NodePreflight.filesToKeep(request.artifacts(), facts.installed());
    UpgradeStep failedStep = UpgradeStep.STAGE;
    CordonResult cordon;
    try {
      step(
          UpgradeStep.STAGE,
          () -> stagerFor(NodeActivitySummaries.stage(request)).stageArtifacts(
              new StageRequest(host, request.profile(), request.artifacts(), request.distribution())),
          NodeUpgradeWorkflowImpl::describeStage);

      failedStep = UpgradeStep.CORDON;
      compensations.push(
          new Compensation(
              UpgradeStep.RELEASE,
              () -> describeUncordon(nodesFor(NodeActivitySummaries.uncordon(request))
                  .uncordonNode(new UncordonRequest(request.node().cluster(), nodeName, owner)))));
      cordon =
          step(
              UpgradeStep.CORDON,
              () -> nodesFor(NodeActivitySummaries.cordon(request)).cordonNode(new CordonRequest(request.node().cluster(), nodeName, owner)),
              c -> c.cordonedByUs() ? "cordoned" : "already cordoned by someone else; left as is");

      failedStep = UpgradeStep.DRAIN;
      NodeActivities drainer =
          Workflow.newActivityStub(
              NodeActivities.class,
              NodeActivitySummaries.summarized(uiSummaries, ActivityOptionsCatalog.drain(request.drain().timeoutSeconds()),
                  NodeActivitySummaries.drain(request)));
      step(
          UpgradeStep.DRAIN,
          () -> drainer.drainNode(new DrainRequest(request.node().cluster(), nodeName, request.drain())),
          NodeUpgradeWorkflowImpl::describeDrain);

      failedStep = UpgradeStep.BACKUP;
      boolean[] serviceTouched = {false};
      compensations.push(
          new Compensation(
              UpgradeStep.RESTORE, () -> restore(request, host, previous, before, serviceTouched[0])));
      step(
          UpgradeStep.BACKUP,
          () -> hostsFor(NodeActivitySummaries.backup(request)).backupBinaries(new BackupRequest(host, request.profile(), previous, request.distribution())),
          b -> "kept " + String.join(", ", concat(b.backedUp(), b.alreadyBackedUp())));

      failedStep = UpgradeStep.INSTALL;
      step(
          UpgradeStep.INSTALL,
          () -> hostsFor(NodeActivitySummaries.install(request)).installArtifacts(
              new InstallRequest(host, request.profile(), request.artifacts(), request.distribution())),
          i -> "installed " + String.join(", ", concat(i.installed(), i.alreadyInstalled())));

      if (distributionSteps && request.distribution().hasUpgradeCommand()) {
        failedStep = UpgradeStep.UPGRADE;
        // kubeadm rewrites the kubelet's configuration: the rollback restarts the kubelet in any case.
        serviceTouched[0] = true;
        upgradeCommandStarted = true;
        HostActivities upgrader =
            Workflow.newActivityStub(HostActivities.class, NodeActivitySummaries.summarized(
                uiSummaries, ActivityOptionsCatalog.distributionUpgrade(), NodeActivitySummaries.upgradeCommand(request)));
        step(
            UpgradeStep.UPGRADE,
            () -> upgrader.runUpgradeCommand(
                new UpgradeCommandRequest(
                    host, request.distribution(), request.profile(), request.node().role(),
                    request.targetVersion(), request.firstControlPlane())),
            NodeUpgradeWorkflowImpl::describeUpgradeCommand);
      }

      failedStep = UpgradeStep.RESTART;
      serviceTouched[0] = true;
      step(
          UpgradeStep.RESTART,
          () -> hostsFor(NodeActivitySummaries.restart(request))
              .restartService(new ServiceRequest(host, request.serviceName(), request.distribution())),
          r -> r.service() + (r.active() ? " active" : " not active"));

      failedStep = UpgradeStep.VERIFY;
      NodeActivities verifier =
          Workflow.newActivityStub(
              NodeActivities.class,
              NodeActivitySummaries.summarized(uiSummaries, ActivityOptionsCatalog.awaitNode(request.readyTimeoutSeconds()),
                  NodeActivitySummaries.awaitVersion(request, request.targetVersion())));
      step(
          UpgradeStep.VERIFY,
          () ->
              verifier.awaitNodeVersion(
                  new AwaitNodeRequest(
                      request.node().cluster(),
                      nodeName,
                      request.targetVersion(),
                      request.readyTimeoutSeconds())),
          s -> "Ready at " + s.kubeletVersion());

    } catch (ActivityFailure | CanceledFailure e) {
      throw rollBack(request, failedStep, e, before);
    }

    // Past verify the node runs the target: nothing is rolled back any more.
    compensations.clear();
    try {
      step(
          UpgradeStep.UNCORDON,
          () -> cordon.cordonedByUs()
              ? describeUncordon(nodesFor(NodeActivitySummaries.uncordon(request))
                  .uncordonNode(new UncordonRequest(request.node().cluster(), nodeName, owner)))
              : "left cordoned: it was cordoned before this run",
          s -> s);
      recordVersion(request);
    } catch (ActivityFailure e) {
      UpgradeStep failed = currentStep;
      markFailed(failed, describe(e));
      throw fail(failed, typeOf(e), "node runs " + request.targetVersion() + " but " + failed.cliName()
          + " failed: " + describe(e), NodePhase.FAILED, request.targetVersion());
    }
    setPhase(NodePhase.UPGRADED);
    message = "upgraded " + before.kubeletVersion() + " -> " + request.targetVersion();
    publishDetails();
    log.info("node {} upgraded to {}", nodeName, request.targetVersion());
    return new NodeUpgradeResult(
        machineName, nodeName, before.kubeletVersion(), request.targetVersion(), false, List.copyOf(steps));
  }

  private NodeUpgradeResult finishAlreadyAtTarget(
      NodeUpgradeRequest request, NodeState before, String owner, NodeRequest nodeRequest) {
    List<UpgradeStep> skipped = new ArrayList<>(
        List.of(UpgradeStep.STAGE, UpgradeStep.CORDON, UpgradeStep.DRAIN, UpgradeStep.BACKUP,
            UpgradeStep.INSTALL, UpgradeStep.RESTART, UpgradeStep.VERIFY));
    if (distributionSteps && request.distribution().hasUpgradeCommand()) {
      skipped.add(skipped.indexOf(UpgradeStep.INSTALL) + 1, UpgradeStep.UPGRADE);
    }
    for (UpgradeStep s : skipped) {
      begin(s);
      finish(s, StepStatus.SKIPPED, "already at " + request.targetVersion());
    }
    // An earlier run of this workflow ID may have died between verify and uncordon.
    if (owner.equals(before.cordonedBy())) {
      step(
          UpgradeStep.UNCORDON,
          () -> describeUncordon(nodesFor(NodeActivitySummaries.uncordon(request))
              .uncordonNode(new UncordonRequest(nodeRequest.cluster(), nodeName, owner))),
          s -> s);
    } else {
      begin(UpgradeStep.UNCORDON);
      finish(UpgradeStep.UNCORDON, StepStatus.SKIPPED, "not cordoned by this run");
    }
    recordVersion(request);
    setPhase(NodePhase.UPGRADED);
    message = "already at " + request.targetVersion();
    publishDetails();
    return new NodeUpgradeResult(
        machineName, nodeName, before.kubeletVersion(), request.targetVersion(), true, List.copyOf(steps));
  }

  private void recordVersion(NodeUpgradeRequest request) {
    if (distributionSteps) {
      step(
          UpgradeStep.RECORD,
          () -> capiFor(NodeActivitySummaries.record(request)).recordMachineUpgrade(
              new MachineRecordRequest(
                  request.node().cluster().namespace(), machineName, request.targetVersion(),
                  request.distribution(), request.node().role())),
          r -> r.patches().isEmpty() ? "Machine already recorded" : String.join("; ", r.patches()));
      return;
    }
    step(
        UpgradeStep.RECORD,
        () ->
            capiFor(NodeActivitySummaries.record(request)).recordMachineVersion(
                new MachineVersionRequest(
                    request.node().cluster().namespace(), machineName, request.targetVersion())),
        r -> r.changed() ? "Machine.spec.version " + r.previousVersion() + " -> " + request.targetVersion() : "Machine already recorded");
  }

  /** Compensation for backup..verify: put the previous files back and wait for the old version. */
  private String restore(
      NodeUpgradeRequest request,
      HostAccess host,
      List<InstalledFile> previous,
      NodeState before,
      boolean serviceTouched) {
    RestoreResult restored =
        hostsFor(NodeActivitySummaries.restore(request)).restoreBinaries(
            new RestoreRequest(host, request.profile(), previous, request.artifacts(), request.distribution()));
    if (!restored.changed() && !serviceTouched) {
      return "nothing to restore";
    }
    hostsFor(NodeActivitySummaries.restart(request))
        .restartService(new ServiceRequest(host, request.serviceName(), request.distribution()));
    NodeActivities verifier =
        Workflow.newActivityStub(
            NodeActivities.class,
            NodeActivitySummaries.summarized(uiSummaries, ActivityOptionsCatalog.awaitNode(request.readyTimeoutSeconds()),
                NodeActivitySummaries.awaitVersion(request, before.kubeletVersion())));
    NodeState back =
        verifier.awaitNodeVersion(
            new AwaitNodeRequest(
                request.node().cluster(), nodeName, before.kubeletVersion(), request.readyTimeoutSeconds()));
    return "restored " + String.join(", ", concat(restored.restored(), restored.removed()))
        + "; Ready at " + back.kubeletVersion();
  }

  /** Runs the compensations in reverse, detached from cancellation, and builds the failure to throw. */
  private ApplicationFailure rollBack(
      NodeUpgradeRequest request, UpgradeStep failedStep, TemporalFailure cause, NodeState before) {
    boolean cancelled = cause instanceof CanceledFailure || cause.getCause() instanceof CanceledFailure;
    String reason = cancelled ? UpgradeFailures.CANCELLED : typeOf(cause);
    String why = cancelled ? "run cancelled" : describe(cause);
    markFailed(failedStep, why);
    setPhase(NodePhase.ROLLING_BACK);
    message = failedStep.cliName() + " failed: " + why + "; rolling back";
    log.warn("node {} failed at {} ({}): rolling back", nodeName, failedStep.cliName(), reason);

    if (compensations.isEmpty()) {
      return fail(failedStep, reason, failedStep.cliName() + " failed: " + why + "; nothing was changed on the node",
          NodePhase.FAILED, before.kubeletVersion());
    }
    String[] rollbackError = {null};
    Workflow.newDetachedCancellationScope(
            () -> {
              while (!compensations.isEmpty()) {
                Compensation c = compensations.pop();
                begin(c.step());
                try {
                  finish(c.step(), StepStatus.DONE, c.action().get());
                } catch (ActivityFailure e) {
                  markFailed(c.step(), describe(e));
                  rollbackError[0] = c.step().cliName() + " failed: " + describe(e);
                  return; // never uncordon a node whose rollback did not complete
                }
              }
            })
        .run();

    if (rollbackError[0] != null) {
      String text = failedStep.cliName() + " failed (" + why + "), then " + rollbackError[0]
          + "; node left cordoned for an operator" + staticPodNote(request);
      return fail(failedStep, UpgradeFailures.ROLLBACK_FAILED, text, NodePhase.ROLLBACK_FAILED, null);
    }
    String text = failedStep.cliName() + " failed: " + why + "; rolled back to " + before.kubeletVersion()
        + staticPodNote(request);
    return fail(failedStep, reason, text, NodePhase.ROLLED_BACK, before.kubeletVersion());
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
        + " /etc/kubernetes/tmp/kubeadm-backup-manifests-* and kubeadm-backup-etcd-* on " + nodeName
        + "; check the static pods' image tags before retrying";
  }

  private ApplicationFailure fail(
      UpgradeStep failedStep, String reason, String text, NodePhase endPhase, String versionNow) {
    setPhase(endPhase);
    message = text;
    publishDetails();
    log.warn("node {}: {}", nodeName, text);
    NodeFailure details =
        new NodeFailure(machineName, nodeName, failedStep, reason, text, endPhase, versionNow, List.copyOf(steps));
    return UpgradeFailures.nonRetryable(reason, text, details);
  }

  /** The stub for one call: with the call's UI summary from {@link #UI_SUMMARIES_CHANGE} on. */
  private HostActivities hostsFor(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(HostActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.hostStep(), summary))
        : hosts;
  }

  private HostActivities stagerFor(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(HostActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.staging(), summary))
        : hosts;
  }

  private NodeActivities nodesFor(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(NodeActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.kubeCall(), summary))
        : nodes;
  }

  private ClusterApiActivities capiFor(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(ClusterApiActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.kubeCall(), summary))
        : clusterApi;
  }

  /** The run's current details in the Temporal UI: node, phase, step and the last message. */
  private void publishDetails() {
    Workflow.setCurrentDetails("node " + nodeName + " (Machine " + machineName + "); " + phase
        + (currentStep == null ? "" : "; step " + currentStep.cliName())
        + (message == null || message.isEmpty() ? "" : "; " + message));
  }

  private void setPhase(NodePhase next) {
    phase = next;
    if (upsertSearchAttributes) {
      Workflow.upsertTypedSearchAttributes(SearchAttributes.PHASE.valueSet(next.name()));
    }
    publishDetails();
  }

  private <T> T step(UpgradeStep step, Supplier<T> action, java.util.function.Function<T, String> summary) {
    begin(step);
    T result = action.get();
    finish(step, StepStatus.DONE, summary.apply(result));
    return result;
  }

  private void begin(UpgradeStep step) {
    currentStep = step;
    steps.add(new StepRecord(step, StepStatus.RUNNING, Workflow.currentTimeMillis(), 0, ""));
    publishDetails();
  }

  private void finish(UpgradeStep step, StepStatus status, String text) {
    int i = lastIndexOf(step);
    StepRecord started = steps.get(i);
    steps.set(i, new StepRecord(step, status, started.startedMillis(), Workflow.currentTimeMillis(), text));
    message = step.cliName() + ": " + text;
    publishDetails();
  }

  private void markFailed(UpgradeStep step, String text) {
    int i = lastIndexOf(step);
    if (i < 0 || steps.get(i).status() != StepStatus.RUNNING) {
      begin(step);
      i = lastIndexOf(step);
    }
    StepRecord started = steps.get(i);
    steps.set(i, new StepRecord(step, StepStatus.FAILED, started.startedMillis(), Workflow.currentTimeMillis(), text));
    publishDetails();
  }

  private int lastIndexOf(UpgradeStep step) {
    for (int i = steps.size() - 1; i >= 0; i--) {
      if (steps.get(i).step() == step) {
        return i;
      }
    }
    return -1;
  }

  private static String typeOf(TemporalFailure failure) {
    Throwable cause = failure instanceof ActivityFailure ? failure.getCause() : failure;
    if (cause instanceof ApplicationFailure app) {
      return app.getType();
    }
    if (cause instanceof TimeoutFailure) {
      return UpgradeFailures.STEP_TIMED_OUT;
    }
    if (cause instanceof CanceledFailure) {
      return UpgradeFailures.CANCELLED;
    }
    return UpgradeFailures.REMOTE_COMMAND_FAILED;
  }

  private static String describe(TemporalFailure failure) {
    Throwable cause = failure instanceof ActivityFailure ? failure.getCause() : failure;
    if (cause instanceof ApplicationFailure app) {
      return app.getOriginalMessage();
    }
    if (cause instanceof TimeoutFailure timeout) {
      return "timed out (" + timeout.getTimeoutType() + ")";
    }
    return cause == null ? failure.getMessage() : cause.getMessage();
  }

  private static String describeStage(StageResult r) {
    return r.uploaded().isEmpty()
        ? "already staged: " + String.join(", ", r.alreadyPresent())
        : "uploaded " + String.join(", ", r.uploaded()) + " (" + r.bytesSent() / (1024 * 1024) + " MiB)";
  }

  private static String describeUpgradeCommand(UpgradeCommandResult r) {
    if (r.alreadyUpgraded()) {
      return "already upgraded; " + r.command() + " not needed";
    }
    return r.command() + (r.backupDir() == null || r.backupDir().isEmpty()
        ? "" : "; kubeadm kept the previous manifests in " + r.backupDir());
  }

  private static String describeDrain(DrainResult r) {
    return "evicted " + r.evicted() + ", deleted " + r.deleted() + ", skipped "
        + (r.skippedDaemonSet() + r.skippedMirror()) + " DaemonSet/mirror pods in " + r.waitedSeconds() + "s";
  }

  private static String describeUncordon(UncordonResult r) {
    return r.uncordoned() ? "uncordoned" : "left as is: " + r.reason();
  }

  private static List<String> concat(List<String> a, List<String> b) {
    List<String> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }
}
