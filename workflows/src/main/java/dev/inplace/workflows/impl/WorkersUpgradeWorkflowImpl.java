package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.PoolVersionRequest;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterInventory.PoolInfo;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckRequest;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneCheckRequest;
import dev.inplace.workflows.api.NodeActivities.ExpectedNode;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * WorkersUpgrade (DESIGN s.3): one MachineDeployment's workers through a sliding window of
 * NodeUpgrade children, started only when every control-plane node runs the target.
 *
 * <p>History stays bounded: when the history plus what the nodes in flight will add would pass
 * {@code historyLimit} events (or the server suggests it), the run starts no more nodes, lets those in
 * flight finish and continues as new, carrying every node's status and the operator's settings; the
 * next run skips the cluster preflight. So a pool of a
 * thousand nodes is one logical run of many short histories, and no node is upgraded twice or lost.
 */
public class WorkersUpgradeWorkflowImpl extends RollingUpgrade implements WorkersUpgradeWorkflow {
  private static final Logger log = Workflow.getLogger(WorkersUpgradeWorkflowImpl.class);

  /**
   * History events a run stays within before it continues as new: about 500 nodes' worth, half of
   * the 10,000 a run should never exceed, so few continue-as-new points drain the window.
   */
  public static final int DEFAULT_HISTORY_LIMIT = 5000;

  private final NodeActivities startGate =
      Workflow.newActivityStub(
          NodeActivities.class,
          ActivityOptionsCatalog.controlPlaneHealth(ActivityOptionsCatalog.WORKERS_GATE_SECONDS));

  private final int configuredHistoryLimit;
  private int historyLimit;
  private MaxUnavailable maxUnavailable = MaxUnavailable.parse("1");
  private FailurePolicy policy = FailurePolicy.HALT;
  private int maxFailures;
  private int runs = 1;

  public WorkersUpgradeWorkflowImpl() {
    this(DEFAULT_HISTORY_LIMIT);
  }

  /** @param historyLimit history events a run stays within before it continues as new (tests use small values) */
  public WorkersUpgradeWorkflowImpl(int historyLimit) {
    super(SearchAttributes.KIND_WORKERS);
    this.configuredHistoryLimit = historyLimit;
  }

  @Override
  public WorkersUpgradeResult upgrade(WorkersUpgradeRequest request) {
    // Recorded in history, so a replay decides with the limit the run had even if the default changes.
    historyLimit = Workflow.sideEffect(Integer.class, () -> configuredHistoryLimit);
    try {
      validate(request);
      policy = request.onFailure() == null ? FailurePolicy.HALT : request.onFailure();
      maxFailures = request.maxFailures();
      WorkersCarriedState carried = request.carried();
      if (carried == null) {
        maxUnavailable = MaxUnavailable.parse(request.maxUnavailable() == null ? "1" : request.maxUnavailable());
        begin(request.cluster(), request.template(), request.window(), request.soakSeconds(), false);
        checkPool(request);
      } else {
        maxUnavailable = MaxUnavailable.parse(carried.maxUnavailable());
        runs = carried.runs();
        book.load(carried.machines(), carried.nodes());
        book.restoreControls(carried.paused(), carried.aborting());
        begin(request.cluster(), request.template(), request.window(), request.soakSeconds(), true);
        log.info("run {} of {}: {}", runs, Workflow.getInfo().getWorkflowId(), counts());
      }
      if (upgradeNodes() == LoopEnd.CONTINUE_AS_NEW) {
        continueAsNew(request);
      }
      recordPoolVersion(request.machineDeployment());
      return result(request);
    } catch (CanceledFailure e) {
      waitForNodesAfterCancellation();
      throw e;
    }
  }

  private void continueAsNew(WorkersUpgradeRequest request) {
    // An Update accepted meanwhile must complete in this run, and its effect be carried.
    Workflow.await(Workflow::isEveryHandlerFinished);
    WorkersCarriedState next =
        new WorkersCarriedState(
            book.machines(), book.statuses(), maxUnavailable.text(), book.paused(), book.aborting(), runs + 1);
    log.info("continuing as new at {} events: run {} next, {}", Workflow.getInfo().getHistoryLength(), runs + 1, counts());
    Workflow.continueAsNew(request.withCarried(next));
    throw new IllegalStateException("continueAsNew returned");
  }

  // ---- preflight (first run only) ---------------------------------------------------------------

  private void validate(WorkersUpgradeRequest request) {
    if (request == null || request.cluster() == null || request.template() == null) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "a cluster and a node template are required");
    }
    if (request.machineDeployment() == null || request.machineDeployment().isBlank()) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "a MachineDeployment is required");
    }
    if (!KubeVersion.isValid(request.template().targetVersion())) {
      throw refuse(UpgradeFailures.INVALID_REQUEST,
          "'" + request.template().targetVersion() + "' is not a Kubernetes version like v1.31.2+k3s1");
    }
    if (request.maxFailures() < 0 || request.soakSeconds() < 0) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "maxFailures and soakSeconds must be >= 0");
    }
    try {
      MaxUnavailable.parse(request.maxUnavailable() == null ? "1" : request.maxUnavailable());
    } catch (IllegalArgumentException e) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, e.getMessage());
    }
    WorkersCarriedState carried = request.carried();
    if (carried != null && (carried.machines() == null || carried.nodes() == null)) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "carried state without machines or nodes");
    }
  }

  /** DESIGN s.6 for a worker pool, before anything changes; then loads the pool into the book. */
  private void checkPool(WorkersUpgradeRequest request) {
    String md = request.machineDeployment();
    ClusterInventory inventory =
        preflight("reading cluster " + cluster(), UpgradeFailures.PREFLIGHT_FAILED,
            () -> clusterApi.describeCluster(cluster()));
    List<String> pools = inventory.pools().stream().map(PoolInfo::machineDeployment).toList();
    if (!pools.contains(md)) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "MachineDeployment " + md + " not found in cluster " + cluster()
          + "; it has: " + (pools.isEmpty() ? "none" : ClusterPreflight.list(pools)));
    }
    List<MachineInfo> pool =
        inventory.machines().stream().filter(m -> m.role() == NodeRole.WORKER && md.equals(m.pool())).toList();
    for (MachineInfo m : pool) {
      try {
        template().forNode(m.target(cluster()));
      } catch (IllegalArgumentException e) {
        throw refuse(UpgradeFailures.INVALID_REQUEST, "Machine " + m.name() + ": " + e.getMessage());
      }
    }
    requireControlPlaneAtTarget(
        inventory.machines().stream().filter(m -> m.role() == NodeRole.CONTROL_PLANE).toList());
    ClusterPreflight.versionSkew(pool, target())
        .ifPresent(why -> {
          throw refuse(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, why);
        });
    preflight("verifying the artifacts of " + target(), UpgradeFailures.ARTIFACT_UNAVAILABLE,
        () -> hosts.verifyArtifacts(new ArtifactCheckRequest(template().artifacts())));
    warnAboutBudgets();

    book.load(pool, List.of());
    for (MachineInfo m : pool) {
      if (ClusterPreflight.atTarget(m, m.kubeletVersion(), target())) {
        book.alreadyAtTarget(m.nodeName(), target());
      }
    }
  }

  /** A kubelet must never be newer than the apiserver: every control-plane node runs the target. */
  private void requireControlPlaneAtTarget(List<MachineInfo> controlPlanes) {
    KubeVersion wanted = KubeVersion.parse(target());
    List<String> behind = new ArrayList<>();
    for (MachineInfo m : controlPlanes) {
      Optional<KubeVersion> now = ClusterPreflight.currentVersion(m);
      if (now.isPresent() && now.get().compareTo(wanted) != 0) {
        behind.add(m.nodeName() + " runs " + now.get());
      }
    }
    if (!behind.isEmpty()) {
      throw refuse(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "control plane not at " + target() + ": "
          + ClusterPreflight.list(behind) + "; upgrade the control plane first");
    }
    try {
      startGate.awaitControlPlaneHealthy(
          new ControlPlaneCheckRequest(
              cluster(),
              controlPlanes.stream().map(m -> new ExpectedNode(m.nodeName(), target())).toList(),
              template().distribution().reportsEtcdVoterCondition(),
              ActivityOptionsCatalog.WORKERS_GATE_SECONDS));
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      String type = Failures.typeOf(e, UpgradeFailures.CONTROL_PLANE_UNHEALTHY);
      throw refuse(
          UpgradeFailures.CONTROL_PLANE_UNHEALTHY.equals(type) ? UpgradeFailures.UNSUPPORTED_VERSION_SKEW : type,
          "control plane not at " + target() + ": " + Failures.describe(e));
    }
  }

  private void warnAboutBudgets() {
    try {
      BudgetReport report = nodes.listBlockingBudgets(cluster());
      ClusterPreflight.budgetWarning(report.blocking()).ifPresent(this::warn);
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      warn("could not list PodDisruptionBudgets: " + Failures.describe(e));
    }
  }

  // ---- the node loop's worker rules -------------------------------------------------------------

  @Override
  protected int window() {
    return maxUnavailable.windowFor(book.total());
  }

  @Override
  protected String maxUnavailable() {
    return maxUnavailable.text();
  }

  @Override
  protected void checkMaxUnavailable(String value) {
    book.checkRunning();
    MaxUnavailable.parse(value);
  }

  @Override
  protected String applyMaxUnavailable(String value) {
    maxUnavailable = MaxUnavailable.parse(value);
    return "maxUnavailable " + maxUnavailable.text() + ": up to " + window() + " node(s) at once";
  }

  @Override
  protected FailurePolicy failurePolicy() {
    return policy;
  }

  @Override
  protected int maxFailures() {
    return maxFailures;
  }

  @Override
  protected long historyLimit() {
    return historyLimit;
  }

  // ---- end --------------------------------------------------------------------------------------

  private void recordPoolVersion(String md) {
    if (book.aborting()) {
      end(RunPhase.ABORTED, "aborted: " + counts() + "; " + target() + " not recorded on MachineDeployment " + md);
      return;
    }
    if (!book.allUpgraded()) {
      end(outcome(), counts() + "; " + target() + " not recorded on MachineDeployment " + md
          + " because not every node of the pool runs it");
      return;
    }
    book.finish();
    setPhase(RunPhase.RECORDING, "recording " + target() + " on MachineDeployment " + md);
    try {
      BookkeepingResult done =
          clusterApi.recordWorkerPoolVersion(
              new PoolVersionRequest(cluster().namespace(), md, target(), Workflow.getInfo().getWorkflowId()));
      end(RunPhase.SUCCEEDED, "every node of " + md + " runs " + target() + "; "
          + (done == null || done.patches().isEmpty() ? "already recorded" : String.join("; ", done.patches())));
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      end(RunPhase.FAILED, "every node of " + md + " runs " + target() + " but recording it failed: "
          + Failures.describe(e) + "; set the MachineSet and MachineDeployment version to " + target()
          + " so CAPI does not roll the machines");
    }
  }

  private WorkersUpgradeResult result(WorkersUpgradeRequest request) {
    return new WorkersUpgradeResult(
        cluster(),
        request.machineDeployment(),
        target(),
        book.upgraded(),
        book.failed(),
        book.skipped(),
        book.aborting(),
        runs,
        book.statuses());
  }
}
