package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.HostAccessCheck;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.UpgradeStep;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.common.SearchAttributeUpdate;
import io.temporal.workflow.Workflow;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * The NodeUpgrade saga: picks the run's versioned behaviour, then hands the run to its
 * collaborators: {@link NodeUpgradeSteps} (the step sequence), {@link NodeRollback} (the
 * compensations, run in reverse in a detached scope), {@link NodeStepLog} (steps, phase, the
 * progress query and the UI's current details) and {@link NodeActivityStubs}. The refusal rules
 * live in {@link NodePreflight}.
 */
public class NodeUpgradeWorkflowImpl implements NodeUpgradeWorkflow {
  private static final Logger log = Workflow.getLogger(NodeUpgradeWorkflowImpl.class);

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

  /**
   * Change ID: runs from this version on hold the Node's version against the release as the Node
   * reports it ({@link KubeVersion#nodeRuns}): a k0s node reports {@code vX.Y.Z+k0s} for the release
   * {@code vX.Y.Z+k0s.N}, so a node already upgraded is now skipped instead of stopped and started
   * again, and a control plane at the target no longer counts as behind a worker's target.
   */
  static final String K0S_NODE_VERSION_CHANGE = "node-upgrade-k0s-node-version";

  /**
   * Change ID: a run whose request asks it ({@code awaitPermit}, a parent preparing nodes ahead of
   * its window) waits after preflight, stage and backup for the parent's {@link #permit} before it cordons,
   * and looks at its Node again when the permit comes; a run stood down while it waits ends with
   * nothing changed on the node.
   */
  static final String PERMIT_CHANGE = "node-upgrade-waits-for-permit";

  /**
   * Change ID: a run whose request asks it ({@code reportStaged}, a node that starts with its turn
   * in a parent preparing nodes ahead) signals its parent run ({@link StagedReport}) once
   * its stage step is done, without waiting for the signal to land.
   */
  static final String STAGED_REPORT_CHANGE = "node-upgrade-reports-staged";

  /**
   * Change ID: every run backs up the files it will replace right after its stage step, before it
   * cordons (before, only a run prepared ahead did), so the node is cordoned only for the steps that
   * change it; a backup that fails now fails the run with nothing to roll back.
   */
  static final String BACKUP_BEFORE_CORDON_CHANGE = "node-upgrade-backs-up-before-cordon";

  /**
   * Change ID: a run whose request asks it ({@code reportEnd}, a child of a WorkersUpgrade run that
   * hands its children over at continue-as-new) tells its parent's workflow how it ended ({@link
   * EndReport}) before it ends, whatever the outcome.
   */
  static final String END_REPORT_CHANGE = "node-upgrade-reports-end";

  /**
   * Change ID: runs from this version on read the Node, the host and (a worker) the control plane's
   * versions at once in preflight, instead of one after the other; the rules judge the three
   * together as before.
   */
  static final String PREFLIGHT_READS_AT_ONCE_CHANGE = "node-upgrade-preflight-reads-at-once";

  /**
   * Change ID: runs from this version on have the management cluster confirm their host first
   * ({@code confirmHostAccess}: the Machine, its Cluster, the address, the SSH Secrets and the
   * layout the cluster's resources configure), before anything is marked, read or connected; a run
   * started by hand with a made-up host or Secret ends there with nothing changed (issue 34, H4).
   */
  static final String HOST_ACCESS_CHANGE = "node-upgrade-confirms-host-access";

  /**
   * Change ID: runs from this version on upsert a search attribute only when its value changes: a run
   * its parent started with its cluster, kind, target version, node and phase {@code UPGRADING} (every
   * child) no longer upserts them again at its start. The same attributes with the same values; two
   * billable actions fewer per node on Temporal Cloud (docs/benchmarks.md).
   */
  static final String UNCHANGED_ATTRIBUTES_KEPT_CHANGE = "node-upgrade-unchanged-attributes-kept";

  private final NodeStepLog steps = new NodeStepLog();
  private final NodeActivityStubs stubs = new NodeActivityStubs();
  /** Set by the parent's permit signal (kept if it comes before the run waits for it). */
  private boolean permitted;

  @Override
  public void permit() {
    permitted = true;
  }

  @Override
  public NodeProgress progress() {
    return steps.progress();
  }

  @Override
  public NodeUpgradeResult upgrade(NodeUpgradeRequest request) {
    // Asked only by requests that carry reportEnd, which no run before the change had.
    boolean reportsEnd =
        request.reportEnd() && Workflow.getVersion(END_REPORT_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    return EndReport.around(request.node().nodeName(), reportsEnd, () -> run(request));
  }

  private NodeUpgradeResult run(NodeUpgradeRequest request) {
    steps.identify(request.node().machineName(), request.node().nodeName());
    boolean upsertSearchAttributes =
        Workflow.getVersion(SEARCH_ATTRIBUTES_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    boolean onlyChanges = upsertSearchAttributes
        && Workflow.getVersion(UNCHANGED_ATTRIBUTES_KEPT_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    steps.upsertPhase(upsertSearchAttributes, onlyChanges);
    if (upsertSearchAttributes) {
      List<SearchAttributeUpdate<?>> updates = List.of(
          RunSearchAttributes.CLUSTER.valueSet(request.node().cluster().toString()),
          RunSearchAttributes.KIND.valueSet(RunSearchAttributes.KIND_NODE),
          RunSearchAttributes.TARGET_VERSION.valueSet(request.targetVersion()),
          RunSearchAttributes.NODE.valueSet(List.of(request.node().nodeName())));
      List<SearchAttributeUpdate<?>> upserted = onlyChanges ? SearchAttributeChanges.of(updates) : updates;
      if (!upserted.isEmpty()) {
        Workflow.upsertTypedSearchAttributes(upserted.toArray(SearchAttributeUpdate<?>[]::new));
      }
    }
    boolean distributionSteps =
        Workflow.getVersion(DISTRIBUTION_STEPS_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    // Before anything is marked or read: a run started by hand skips the intake's checks.
    if (Workflow.getVersion(CATALOGUE_RULES_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1) {
      Optional<ApplicationFailure> unsafe = NodePreflight.catalogueRefusal(request);
      if (unsafe.isPresent()) {
        steps.begin(UpgradeStep.PREFLIGHT);
        String why = unsafe.get().getOriginalMessage();
        steps.markFailed(UpgradeStep.PREFLIGHT, why);
        throw steps.fail(UpgradeStep.PREFLIGHT, unsafe.get().getType(), why, NodePhase.FAILED, null);
      }
    }
    stubs.uiSummaries(Workflow.getVersion(UI_SUMMARIES_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1);
    if (Workflow.getVersion(HOST_ACCESS_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1) {
      confirmHostAccess(request);
    }
    NodePreflight.VersionMatch versionMatch =
        Workflow.getVersion(K0S_NODE_VERSION_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1
            ? NodePreflight.VersionMatch.AS_REPORTED
            : NodePreflight.VersionMatch.EXACT;
    // Asked only by requests that carry awaitPermit, which no run before the change had.
    boolean waitsForPermit =
        request.awaitPermit() && Workflow.getVersion(PERMIT_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    // Asked only by requests that carry reportStaged, which no run before the change had.
    boolean reportsStaged =
        request.reportStaged() && Workflow.getVersion(STAGED_REPORT_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    boolean backupBeforeCordon =
        Workflow.getVersion(BACKUP_BEFORE_CORDON_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    boolean readsAtOnce =
        Workflow.getVersion(PREFLIGHT_READS_AT_ONCE_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    NodeUpgradeSteps sequence =
        new NodeUpgradeSteps(steps, stubs, new NodeRollback(steps, stubs), distributionSteps, versionMatch,
            waitsForPermit ? () -> permitted : null,
            reportsStaged ? () -> StagedReport.toParent(request.node().nodeName()) : null,
            backupBeforeCordon, readsAtOnce);
    if (request.markMachine()
        && Workflow.getVersion(OWN_MACHINE_MARK_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1) {
      return upgradeMarked(request, sequence);
    }
    return sequence.run(request);
  }

  /** The management cluster's word on the run's host, or the run ends in preflight with nothing changed. */
  private void confirmHostAccess(NodeUpgradeRequest request) {
    try {
      stubs.capi(NodeActivitySummaries.confirmHostAccess(request)).confirmHostAccess(
          new HostAccessCheck(request.hostAccess(), request.distribution(), request.profile()));
    } catch (ActivityFailure e) {
      steps.begin(UpgradeStep.PREFLIGHT);
      String why = "refusing the run's host: " + NodeStepResults.describe(e) + "; nothing was changed";
      steps.markFailed(UpgradeStep.PREFLIGHT, why);
      throw steps.fail(UpgradeStep.PREFLIGHT, NodeStepResults.typeOf(e), why, NodePhase.FAILED, null);
    }
  }

  /**
   * Marks the Machine (skip-remediation, owned by this run) around the whole upgrade, so a
   * MachineHealthCheck does not replace the node while it is drained and restarted; the mark is
   * removed after success, failure or cancellation alike, detached from the cancellation.
   */
  private NodeUpgradeResult upgradeMarked(NodeUpgradeRequest request, NodeUpgradeSteps sequence) {
    String owner = Workflow.getInfo().getWorkflowId();
    String namespace = request.node().cluster().namespace();
    String machine = steps.machineName();
    try {
      stubs.capi(NodeActivitySummaries.mark(request, true))
          .markMachineUpgrading(new MachineMarkRequest(namespace, machine, true, owner));
    } catch (ActivityFailure e) {
      steps.begin(UpgradeStep.PREFLIGHT);
      String why = "could not mark Machine " + machine + " (" + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION
          + "): " + NodeStepResults.describe(e) + "; nothing was changed";
      steps.markFailed(UpgradeStep.PREFLIGHT, why);
      throw steps.fail(UpgradeStep.PREFLIGHT, NodeStepResults.typeOf(e), why, NodePhase.FAILED, null);
    }
    try {
      return sequence.run(request);
    } finally {
      try {
        Workflow.newDetachedCancellationScope(
                () -> stubs.capi(NodeActivitySummaries.mark(request, false))
                    .markMachineUpgrading(new MachineMarkRequest(namespace, machine, false, owner)))
            .run();
      } catch (ActivityFailure e) {
        log.warn("could not remove {} from Machine {}: {}", ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION,
            machine, NodeStepResults.describe(e));
        steps.message(steps.message() + "; warning: could not remove "
            + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION + " from Machine " + machine + ": "
            + NodeStepResults.describe(e));
      }
    }
  }
}
