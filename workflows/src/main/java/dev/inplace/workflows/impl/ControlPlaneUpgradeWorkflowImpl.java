package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.ControlPlaneVersionRequest;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneCheckRequest;
import dev.inplace.workflows.api.NodeActivities.ExpectedNode;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodesRequest;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * ControlPlaneUpgrade (DESIGN s.3): cluster preflight, an etcd snapshot on the first control-plane
 * node, then the control-plane nodes strictly one at a time, each behind a health gate, and the
 * version recorded on the control-plane object once every one of them runs it.
 *
 * <p>A control plane has a handful of nodes, so its history stays small and it never continues as new.
 */
public class ControlPlaneUpgradeWorkflowImpl implements ControlPlaneUpgradeWorkflow {
  private final ClusterApiActivities clusterApi =
      Workflow.newActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.kubeCall());
  private final NodeActivities nodes =
      Workflow.newActivityStub(NodeActivities.class, ActivityOptionsCatalog.kubeCall());
  private final HostActivities hosts =
      Workflow.newActivityStub(
          HostActivities.class,
          ActivityOptionsCatalog.hostStep(),
          Map.of(
              "SnapshotEtcd", ActivityOptionsCatalog.etcdSnapshot(),
              "VerifyArtifacts", ActivityOptionsCatalog.artifactFetch()));
  private final NodeActivities healthGate =
      Workflow.newActivityStub(
          NodeActivities.class,
          ActivityOptionsCatalog.controlPlaneHealth(ActivityOptionsCatalog.CONTROL_PLANE_GATE_SECONDS));

  /**
   * Change ID: runs from version 1 on pause the control-plane object for the whole run (added
   * unversioned by commit 71c4fa5; older runs never pause it). From version 2 on, a run that ends
   * with no node changed (aborted, cancelled, every node skipped) removes its pause again.
   */
  static final String PAUSE_CONTROL_PLANE_CHANGE = "control-plane-paused-for-run";

  /**
   * Change ID: from version 1 on, preflight inspects the control-plane hosts all at once (each a
   * read-only look) and judges them in Machine order as before; older runs inspect one after the
   * other. Same activities, same refusals; the preflight takes the longest inspection instead of
   * their sum.
   */
  static final String PARALLEL_HOST_INSPECTION_CHANGE = "control-plane-hosts-inspected-together";

  /**
   * Change ID: from version 1 on, preflight verifies the release's artifacts (a read of the
   * worker's artifact cache) while the hosts are inspected, and judges its answer after theirs as
   * before; older runs verify once every host was judged. Same activities, same refusals in the same
   * order; the preflight takes the longer of the two instead of their sum.
   */
  static final String ARTIFACTS_ALONGSIDE_HOSTS_CHANGE = "control-plane-artifacts-verified-alongside-hosts";

  private final NodeBook book = new NodeBook();
  private final NodeThreads threads = new NodeThreads();
  private final RunRules rules = RunRules.oneAtATime();
  private final RunStatus status = new RunStatus(RunSearchAttributes.KIND_CONTROL_PLANE, book, rules, threads);
  private final NodeChildren children =
      new NodeChildren(RunSearchAttributes.KIND_CONTROL_PLANE, clusterApi, book, threads, this::gate, this::requestFor,
          status::warn, this::mayPrepareAhead);
  private final NodeLoop loop = new NodeLoop(book, threads, rules, status, children);
  private final OperatorControls controls =
      new OperatorControls(RunSearchAttributes.KIND_CONTROL_PLANE, book, rules, threads);
  private final EtcdSnapshotStep etcdSnapshot = new EtcdSnapshotStep(hosts, status);
  private final ControlPlaneHostChecks hostChecks = new ControlPlaneHostChecks(hosts, status);
  private ClusterRef cluster;
  private NodeUpgradeTemplate template;
  private List<MachineInfo> controlPlanes = List.of();
  /** The control-plane object's pause for the run, and what the end does with it. */
  private final ControlPlanePause pause = new ControlPlanePause(clusterApi, book);
  private ObjectRef controlPlaneObject;
  /** The kubelet version of each control-plane node as preflight saw it, by node name. */
  private final Map<String, String> observed = new LinkedHashMap<>();
  /** How this run holds versions against the target ({@link ClusterPreflight#versionMatch}); set at the start. */
  private VersionMatch versions = VersionMatch.EXACT;

  @Override
  public ControlPlaneUpgradeResult upgrade(ControlPlaneUpgradeRequest request) {
    try {
      validate(request);
      cluster = request.cluster();
      template = request.template();
      children.begin(cluster, target());
      versions = ClusterPreflight.versionMatch();
      status.begin(cluster, template, false);
      loop.begin(cluster, target(), request.window(), request.soakSeconds());
      ClusterInventory inventory =
          status.preflight("reading cluster " + request.cluster(), UpgradeFailures.PREFLIGHT_FAILED,
              () -> clusterApi.describeCluster(request.cluster()));
      controlPlaneObject = inventory.controlPlane();
      Map<String, NodeUpgradeRequest> requests = checkControlPlanes(inventory);
      if (!book.aborting()) {
        etcdSnapshot.take(requests.get(controlPlanes.get(0).nodeName()), controlPlanes, observed, target(), versions);
        pause.version(Workflow.getVersion(PAUSE_CONTROL_PLANE_CHANGE, Workflow.DEFAULT_VERSION, 2));
        if (pause.pausesForTheRun()) {
          pause.pause(cluster(), inventory.controlPlane(), target(), status);
        }
      }
      loop.run();
      recordVersion(inventory.controlPlane());
      return result();
    } catch (CanceledFailure e) {
      loop.waitForNodesAfterCancellation();
      if (controlPlaneObject != null) {
        Workflow.newDetachedCancellationScope(() -> {
          String note = pause.releaseOrKeep(cluster(), controlPlaneObject, target(), status::warn);
          if (!note.isEmpty()) {
            status.setPhase(RunPhase.ABORTED, "cancelled; " + status.counts() + note);
          }
        }).run();
      }
      throw e;
    }
  }

  // ---- preflight --------------------------------------------------------------------------------

  private void validate(ControlPlaneUpgradeRequest request) {
    if (request == null || request.cluster() == null || request.template() == null) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "a cluster and a node template are required");
    }
    if (!KubeVersion.isValid(request.template().targetVersion())) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST,
          "'" + request.template().targetVersion() + "' is not a Kubernetes version like v1.31.2+k3s1");
    }
    if (request.soakSeconds() < 0) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "soakSeconds must be >= 0");
    }
  }

  /**
   * Every rule of DESIGN s.6 for the control plane, before anything changes. Returns each node's
   * child request (building them validates the Machines).
   */
  private Map<String, NodeUpgradeRequest> checkControlPlanes(ClusterInventory inventory) {
    controlPlanes = RunOrder.controlPlanes(inventory);
    if (controlPlanes.isEmpty()) {
      throw status.refuse(UpgradeFailures.INVALID_REQUEST, "cluster " + cluster() + " has no control-plane Machines");
    }
    Map<String, NodeUpgradeRequest> requests = new LinkedHashMap<>();
    for (MachineInfo m : controlPlanes) {
      try {
        requests.put(m.nodeName(), template().forNode(m.target(cluster())));
      } catch (IllegalArgumentException e) {
        throw status.refuse(UpgradeFailures.INVALID_REQUEST, "Machine " + m.name() + ": " + e.getMessage());
      }
    }
    ClusterPreflight.versionSkew(controlPlanes, target())
        .ifPresent(why -> {
          throw status.refuse(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, why);
        });

    List<String> names = controlPlanes.stream().map(MachineInfo::nodeName).toList();
    NodesState states =
        status.preflight("inspecting the control-plane nodes", UpgradeFailures.PREFLIGHT_FAILED,
            () -> nodes.inspectNodes(new NodesRequest(cluster(), names)));
    List<String> missing = new ArrayList<>();
    List<String> notReady = new ArrayList<>();
    Map<String, NodeState> byName = new LinkedHashMap<>();
    for (NodeState s : states.nodes()) {
      byName.put(s.nodeName(), s);
    }
    for (String name : names) {
      NodeState s = byName.get(name);
      if (s == null || states.missing().contains(name)) {
        missing.add(name);
      } else if (!s.ready()) {
        notReady.add(name);
      } else {
        observed.put(name, s.kubeletVersion());
      }
    }
    if (!missing.isEmpty()) {
      throw status.refuse(UpgradeFailures.NODE_NOT_FOUND,
          "control-plane Node(s) not found in the workload cluster: " + ClusterPreflight.list(missing));
    }
    if (!notReady.isEmpty()) {
      throw status.refuse(UpgradeFailures.NODE_NOT_READY,
          "control-plane node(s) not Ready: " + ClusterPreflight.list(notReady));
    }

    List<MachineInfo> toInspect = controlPlanes.stream()
        .filter(m -> !needsNoHostCheck(m, byName.get(m.nodeName()).kubeletVersion()))
        .toList();
    hostChecks.check(toInspect, requests, byName, template(), versions);
    status.warnAboutBudgets(() -> nodes.listBlockingBudgets(cluster()));

    book.load(controlPlanes, List.of(), java.util.Set.of());
    for (MachineInfo m : controlPlanes) {
      if (RunOrder.atTarget(m, observed.get(m.nodeName()), target(), versions)) {
        book.alreadyAtTarget(m.nodeName(), target());
      }
    }
    return requests;
  }

  /**
   * Whether preflight skips the host inspection of a control plane: before parent-k0s-node-version
   * when its kubelet reports the target; from it on only when the Machine is done ({@link
   * RunOrder#atTarget}), since a k0s kubelet reports {@code +k0s} for every {@code +k0s.N}.
   */
  private boolean needsNoHostCheck(MachineInfo m, String kubeletVersion) {
    return versions == VersionMatch.EXACT
        ? target().equals(kubeletVersion)
        : RunOrder.atTarget(m, kubeletVersion, target(), versions);
  }

  // ---- the node loop's control-plane rules ------------------------------------------------------

  /**
   * The health gate: every control-plane node Ready at the version it should run now (the target
   * once upgraded, what preflight saw otherwise), the apiserver ready and, on k3s, every server an
   * etcd voter.
   */
  private void gate(MachineInfo machine) {
    book.note(machine.nodeName(), "waiting for every control-plane node to be healthy");
    List<ExpectedNode> expected =
        controlPlanes.stream()
            .map(m -> new ExpectedNode(m.nodeName(), expectedVersion(m)))
            .toList();
    healthGate.awaitControlPlaneHealthy(
        new ControlPlaneCheckRequest(
            cluster(), expected, template().distribution().reportsEtcdVoterCondition(),
            ActivityOptionsCatalog.CONTROL_PLANE_GATE_SECONDS));
  }

  /**
   * For a distribution with an upgrade command (kubeadm), the node that upgrades the cluster's
   * control plane ({@code kubeadm upgrade apply}) is the first one started while no control plane
   * runs the target yet: normally the first, and the next one if the first was rolled back and
   * skipped. Every later one runs {@code kubeadm upgrade node}. Only the child's input changes.
   */
  private NodeUpgradeRequest requestFor(MachineInfo machine) {
    NodeUpgradeRequest request = template.forNode(machine.target(cluster));
    if (!template().distribution().hasUpgradeCommand()) {
      return request;
    }
    boolean applied =
        controlPlanes.stream()
            .anyMatch(m -> versions.runs(observed.get(m.nodeName()), target())
                || book.status(m.nodeName()).phase() == NodePhase.UPGRADED);
    return request.withFirstControlPlane(!applied);
  }

  /**
   * Control-plane nodes may be prepared ahead unless the distribution has an upgrade command: which
   * node runs it ({@link #requestFor}) is decided from the nodes before it when its child starts.
   */
  private boolean mayPrepareAhead() {
    return !template().distribution().hasUpgradeCommand();
  }

  private String expectedVersion(MachineInfo m) {
    return book.status(m.nodeName()).phase() == NodePhase.UPGRADED ? target() : observed.get(m.nodeName());
  }

  // ---- end --------------------------------------------------------------------------------------

  private void recordVersion(ObjectRef controlPlane) {
    String object = controlPlane.kind() + " " + controlPlane.name();
    if (book.aborting()) {
      String note = pause.releaseOrKeep(cluster(), controlPlane, target(), status::warn);
      status.end(RunPhase.ABORTED, "aborted: " + status.counts() + "; " + target() + " not recorded on " + object + note);
      return;
    }
    if (!book.allUpgraded()) {
      List<String> skipped =
          book.statuses().stream().filter(s -> s.phase() == NodePhase.SKIPPED).map(NodeStatus::node).toList();
      String note = pause.releaseOrKeep(cluster(), controlPlane, target(), status::warn);
      status.end(status.outcome(), status.counts() + "; " + target() + " not recorded on " + object + " because "
          + ClusterPreflight.list(skipped) + " stayed on the old version (skipped)" + note);
      return;
    }
    book.finish();
    status.setPhase(RunPhase.RECORDING, "recording " + target() + " on " + object);
    try {
      BookkeepingResult done =
          clusterApi.recordControlPlaneVersion(
              new ControlPlaneVersionRequest(
                  cluster().namespace(), controlPlane, target(), Workflow.getInfo().getWorkflowId()));
      status.end(RunPhase.SUCCEEDED, "every control-plane node runs " + target() + "; "
          + (done == null || done.patches().isEmpty() ? object + " already recorded it" : String.join("; ", done.patches())));
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      status.end(RunPhase.FAILED, "every control-plane node runs " + target() + " but recording it on " + object
          + " failed: " + Failures.describe(e) + "; set its spec.version to " + target()
          + " so CAPI does not roll the machines");
    }
  }

  private ControlPlaneUpgradeResult result() {
    return new ControlPlaneUpgradeResult(
        cluster(),
        target(),
        status.etcdSnapshot(),
        book.upgraded(),
        book.failed(),
        book.skipped(),
        book.aborting(),
        book.statuses(),
        pause.leftPaused(),
        status.message());
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
}
