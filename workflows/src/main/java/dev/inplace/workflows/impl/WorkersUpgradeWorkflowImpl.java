package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.PoolVersionRequest;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterInventory.PoolInfo;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaxUnavailable;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.HandedOverNode;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Collectors;
import org.slf4j.Logger;

/**
 * WorkersUpgrade (DESIGN s.3): one MachineDeployment's workers through a sliding window of
 * NodeUpgrade children, started only when every control-plane node runs the target.
 *
 * <p>History stays bounded: when the history plus what the nodes in flight will add would pass
 * {@code historyLimit} events (or the server suggests it), the run starts no more nodes and continues
 * as new, carrying every node's status and the operator's settings; the next run skips the cluster
 * preflight. Runs from {@link #HAND_OVER_CHANGE} on hand the nodes in flight over to the next run,
 * which follows their children ({@link HandedOverChildren}); older runs let them finish first. So a
 * pool of a thousand nodes is one logical run of many short histories, and no node is upgraded twice
 * or lost.
 */
public class WorkersUpgradeWorkflowImpl implements WorkersUpgradeWorkflow {
  private static final Logger log = Workflow.getLogger(WorkersUpgradeWorkflowImpl.class);

  /**
   * History events a run stays within before it continues as new: about 500 nodes' worth, half of
   * the 10,000 a run should never exceed, so few continue-as-new points drain the window.
   */
  public static final int DEFAULT_HISTORY_LIMIT = 5000;

  /**
   * Change ID: runs from this version on continue as new without waiting for the nodes in flight:
   * their children (started with parent close policy abandon, reporting their end to the parent's
   * workflow) are handed over to the next run, which follows them; nodes prepared ahead that wait
   * for their turn are stood down and carried as pending. Older runs let every node in flight finish
   * first, so the window drained before each continue-as-new.
   */
  static final String HAND_OVER_CHANGE = "workers-hand-over-children";

  /** How often a run checks that a child handed over to it, which has not reported its end, still runs. */
  public static final Duration DEFAULT_PROBE_INTERVAL = Duration.ofMinutes(1);

  private final ClusterApiActivities clusterApi =
      Workflow.newActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.kubeCall());
  private final NodeActivities nodes =
      Workflow.newActivityStub(NodeActivities.class, ActivityOptionsCatalog.kubeCall());
  private final HostActivities hosts =
      Workflow.newActivityStub(HostActivities.class, ActivityOptionsCatalog.hostStep(),
          Map.of("VerifyArtifacts", ActivityOptionsCatalog.artifactFetch()));

  private final NodeBook book = new NodeBook();
  private final NodeThreads threads = new NodeThreads();
  private final PoolRules rules = new PoolRules(book);
  private final RunStatus status = new RunStatus(RunSearchAttributes.KIND_WORKERS, book, rules, threads);
  private final PoolStartChecks startChecks = new PoolStartChecks(
      Workflow.newActivityStub(
          NodeActivities.class,
          ActivityOptionsCatalog.controlPlaneHealth(ActivityOptionsCatalog.WORKERS_GATE_SECONDS)),
      hosts, nodes, status);
  private final NodeChildren children = new NodeChildren(
      RunSearchAttributes.KIND_WORKERS, clusterApi, book, threads, m -> {}, this::requestFor, status::warn, () -> true);
  private final NodeLoop loop = new NodeLoop(book, threads, rules, status, children);
  private final OperatorControls controls = new OperatorControls(RunSearchAttributes.KIND_WORKERS, book, rules, threads);
  private final NodeEndReports endReports = new NodeEndReports();
  private final HandedOverChildren followers = new HandedOverChildren(book, threads, endReports, children);
  private final ResetChildren resets = new ResetChildren(book, threads);
  private final int configuredHistoryLimit;
  private final Duration configuredProbeInterval;
  /** Whether this run hands its children over at continue-as-new ({@link #HAND_OVER_CHANGE}); set in begin. */
  private boolean handsOver;
  private ClusterRef cluster;
  private NodeUpgradeTemplate template;
  private int runs = 1;
  /** How this run holds versions against the target ({@link ClusterPreflight#versionMatch}); set in begin. */
  private VersionMatch versions = VersionMatch.EXACT;

  public WorkersUpgradeWorkflowImpl() {
    this(DEFAULT_HISTORY_LIMIT);
  }

  /** @param historyLimit history events a run stays within before it continues as new (tests use small values) */
  public WorkersUpgradeWorkflowImpl(int historyLimit) {
    this(historyLimit, DEFAULT_PROBE_INTERVAL);
  }

  /**
   * @param probeInterval how often a run checks that a child handed over to it, which has not
   *     reported its end, still runs (tests use seconds)
   */
  public WorkersUpgradeWorkflowImpl(int historyLimit, Duration probeInterval) {
    this.configuredHistoryLimit = historyLimit;
    this.configuredProbeInterval = probeInterval;
  }

  @Override
  public WorkersUpgradeResult upgrade(WorkersUpgradeRequest request) {
    // Recorded in history, so a replay decides with the limit the run had even if the default changes.
    int historyLimit = Workflow.sideEffect(Integer.class, () -> configuredHistoryLimit);
    try {
      validate(request);
      FailurePolicy policy = request.onFailure() == null ? FailurePolicy.HALT : request.onFailure();
      WorkersCarriedState carried = request.carried();
      if (carried == null) {
        rules.set(request.maxUnavailable() == null ? "1" : request.maxUnavailable(), policy, request.maxFailures(), historyLimit);
        begin(request, false);
        checkPool(request);
      } else {
        rules.set(carried.maxUnavailable(), policy, request.maxFailures(), historyLimit);
        runs = carried.runs();
        List<HandedOverNode> handedOver = carried.handedOver() == null ? List.of() : carried.handedOver();
        book.load(carried.machines(), carried.nodes(),
            handedOver.stream().map(HandedOverNode::node).collect(Collectors.toSet()));
        book.restoreControls(carried.paused(), carried.aborting());
        begin(request, true);
        endReports.load(carried.endReports());
        handedOver.forEach(h -> followers.follow(book.machine(h.node()), h.childId(), h.childRunId()));
        log.info("run {} of {}: {}; following {} handed over", runs, Workflow.getInfo().getWorkflowId(),
            status.counts(), handedOver.size());
      }
      if (loop.run() == NodeLoop.End.CONTINUE_AS_NEW) {
        continueAsNew(request);
      }
      recordPoolVersion(request.machineDeployment());
      return result(request);
    } catch (CanceledFailure e) {
      loop.waitForNodesAfterCancellation();
      throw e;
    }
  }

  /** Freezes the run's inputs: how it marks Machines, then its search attributes. */
  private void begin(WorkersUpgradeRequest request, boolean resumed) {
    cluster = request.cluster();
    template = request.template();
    children.begin(cluster, target());
    handsOver = Workflow.getVersion(HAND_OVER_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    if (handsOver) {
      children.handOver(endReports);
      loop.handOver();
      // Recorded, as the history limit is: a replay probes at the interval the run had.
      followers.probeEvery(Duration.ofMillis(Workflow.sideEffect(Long.class, configuredProbeInterval::toMillis)));
    }
    versions = ClusterPreflight.versionMatch();
    status.begin(cluster, template, resumed);
    loop.begin(cluster, target(), request.window(), request.soakSeconds());
  }

  private void continueAsNew(WorkersUpgradeRequest request) {
    // An Update accepted meanwhile must complete in this run, and its effect be carried.
    Workflow.await(Workflow::isEveryHandlerFinished);
    // Nodes still in flight here only wait for their children (NodeLoop): the next run follows them.
    List<HandedOverNode> handedOver = threads.followingNodes().entrySet().stream()
        .map(e -> new HandedOverNode(e.getKey(), book.status(e.getKey()).workflowId(), e.getValue()))
        .toList();
    WorkersCarriedState next =
        new WorkersCarriedState(
            book.machines(), book.statuses(), rules.maxUnavailable(), book.paused(), book.aborting(), runs + 1,
            handedOver, endReports.of(handedOver));
    log.info("continuing as new at {} events: run {} next, {}; handing over {}", Workflow.getInfo().getHistoryLength(),
        runs + 1, status.counts(), handedOver.stream().map(HandedOverNode::node).toList());
    Workflow.continueAsNew(request.withCarried(next));
    throw new IllegalStateException("continueAsNew returned");
  }

  // ---- preflight (first run only) ---------------------------------------------------------------

  private void validate(WorkersUpgradeRequest request) {
    if (request == null || request.cluster() == null || request.template() == null) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "a cluster and a node template are required");
    }
    if (request.machineDeployment() == null || request.machineDeployment().isBlank()) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "a MachineDeployment is required");
    }
    if (!KubeVersion.isValid(request.template().targetVersion())) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST,
          "'" + request.template().targetVersion() + "' is not a Kubernetes version like v1.31.2+k3s1");
    }
    if (request.maxFailures() < 0 || request.soakSeconds() < 0) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "maxFailures and soakSeconds must be >= 0");
    }
    try {
      MaxUnavailable.parse(request.maxUnavailable() == null ? "1" : request.maxUnavailable());
    } catch (IllegalArgumentException e) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, e.getMessage());
    }
    WorkersCarriedState carried = request.carried();
    if (carried != null && (carried.machines() == null || carried.nodes() == null)) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "carried state without machines or nodes");
    }
  }

  /** DESIGN s.6 for a worker pool, before anything changes; then loads the pool into the book. */
  private void checkPool(WorkersUpgradeRequest request) {
    String md = request.machineDeployment();
    ClusterInventory inventory =
        status.preflight("reading cluster " + cluster(), UpgradeFailures.PREFLIGHT_FAILED,
            () -> clusterApi.describeCluster(cluster()));
    List<String> pools = RunOrder.pools(inventory);
    if (!pools.contains(md)) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "MachineDeployment " + md + " not found in cluster " + cluster()
          + "; it has: " + (pools.isEmpty() ? "none" : ClusterPreflight.list(pools)));
    }
    List<MachineInfo> pool = RunOrder.pool(inventory, md);
    for (MachineInfo m : pool) {
      try {
        template().forNode(m.target(cluster()));
      } catch (IllegalArgumentException e) {
        throw status.refuse(UpgradeFailures.INVALID_REQUEST, "Machine " + m.name() + ": " + e.getMessage());
      }
    }
    startChecks.check(cluster(), target(), template(), RunOrder.controlPlanes(inventory), pool, versions);

    book.load(pool, List.of(), java.util.Set.of());
    for (MachineInfo m : pool) {
      if (RunOrder.atTarget(m, m.kubeletVersion(), target(), versions)) {
        book.alreadyAtTarget(m.nodeName(), target());
      }
    }
  }

  // ---- end --------------------------------------------------------------------------------------

  private void recordPoolVersion(String md) {
    if (book.aborting()) {
      status.end(RunPhase.ABORTED, "aborted: " + status.counts() + "; " + target() + " not recorded on MachineDeployment " + md);
      return;
    }
    if (!book.allUpgraded()) {
      status.end(status.outcome(), status.counts() + "; " + target() + " not recorded on MachineDeployment " + md
          + " because not every node of the pool runs it");
      return;
    }
    book.finish();
    status.setPhase(RunPhase.RECORDING, "recording " + target() + " on MachineDeployment " + md);
    try {
      BookkeepingResult done =
          clusterApi.recordWorkerPoolVersion(
              new PoolVersionRequest(cluster().namespace(), md, target(), Workflow.getInfo().getWorkflowId()));
      status.end(RunPhase.SUCCEEDED, "every node of " + md + " runs " + target() + "; "
          + (done == null || done.patches().isEmpty() ? "already recorded" : String.join("; ", done.patches())));
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      status.end(RunPhase.FAILED, "every node of " + md + " runs " + target() + " but recording it failed: "
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

  private NodeUpgradeRequest requestFor(MachineInfo machine) {
    return template.forNode(machine.target(cluster));
  }

  private ClusterRef cluster() {
    return cluster;
  }

  private NodeUpgradeTemplate template() {
    return template;
  }

  private String target() {
    return template.targetVersion();
  }

  // ---- operator controls and progress -----------------------------------------------------------

  @Override public String pause() { return controls.pause(); }
  @Override public void validatePause() { controls.validatePause(); }
  @Override public String resume() { return controls.resume(); }
  @Override public void validateResume() { controls.validateResume(); }
  @Override public String abort() { return controls.abort(); }
  @Override public void validateAbort() { controls.validateAbort(); }
  @Override public String setMaxUnavailable(String value) { return controls.setMaxUnavailable(value); }
  @Override public void validateSetMaxUnavailable(String value) { controls.validateSetMaxUnavailable(value); }
  @Override public String retryNode(String node) { return controls.retryNode(node); }
  @Override public void validateRetryNode(String node) { controls.validateRetryNode(node); }
  @Override public String skipNode(String node) { return controls.skipNode(node); }
  @Override public void validateSkipNode(String node) { controls.validateSkipNode(node); }
  @Override public UpgradeProgress progress() { return status.progress(); }
  @Override public void nodeStaged(String node) { threads.staged(node); }
  @Override
  public void nodeEnded(NodeEnd end) {
    if (!resets.take(end)) {
      endReports.accept(end);
    }
  }
}
