package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.ControlPlaneVersionRequest;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.HostInspectRequest;
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
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.api.SearchAttributes;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;

/**
 * ControlPlaneUpgrade (DESIGN s.3): cluster preflight, an etcd snapshot on the first control-plane
 * node, then the control-plane nodes strictly one at a time, each behind a health gate, and the
 * version recorded on the control-plane object once every one of them runs it.
 *
 * <p>A control plane has a handful of nodes, so its history stays small and it never continues as new.
 */
public class ControlPlaneUpgradeWorkflowImpl extends RollingUpgrade implements ControlPlaneUpgradeWorkflow {
  private static final Logger log = Workflow.getLogger(ControlPlaneUpgradeWorkflowImpl.class);

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

  private List<MachineInfo> controlPlanes = List.of();
  /** The control-plane object's pause for the run, and what the end does with it. */
  private final ControlPlanePause pause = new ControlPlanePause(clusterApi, book);
  private ObjectRef controlPlaneObject;
  /** The kubelet version of each control-plane node as preflight saw it, by node name. */
  private final Map<String, String> observed = new LinkedHashMap<>();

  public ControlPlaneUpgradeWorkflowImpl() {
    super(SearchAttributes.KIND_CONTROL_PLANE);
  }

  @Override
  public ControlPlaneUpgradeResult upgrade(ControlPlaneUpgradeRequest request) {
    try {
      validate(request);
      begin(request.cluster(), request.template(), request.window(), request.soakSeconds(), false);
      ClusterInventory inventory =
          preflight("reading cluster " + request.cluster(), UpgradeFailures.PREFLIGHT_FAILED,
              () -> clusterApi.describeCluster(request.cluster()));
      controlPlaneObject = inventory.controlPlane();
      Map<String, NodeUpgradeRequest> requests = checkControlPlanes(inventory);
      if (!book.aborting()) {
        snapshotEtcd(requests.get(controlPlanes.get(0).nodeName()));
        pause.version(Workflow.getVersion(PAUSE_CONTROL_PLANE_CHANGE, Workflow.DEFAULT_VERSION, 2));
        if (pause.pausesForTheRun()) {
          pauseControlPlane(inventory.controlPlane());
        }
      }
      upgradeNodes();
      recordVersion(inventory.controlPlane());
      return result();
    } catch (CanceledFailure e) {
      waitForNodesAfterCancellation();
      if (controlPlaneObject != null) {
        Workflow.newDetachedCancellationScope(() -> {
          String note = pause.releaseOrKeep(cluster(), controlPlaneObject, target(), this::warn);
          if (!note.isEmpty()) {
            setPhase(RunPhase.ABORTED, "cancelled; " + counts() + note);
          }
        }).run();
      }
      throw e;
    }
  }

  // ---- preflight --------------------------------------------------------------------------------

  private void validate(ControlPlaneUpgradeRequest request) {
    if (request == null || request.cluster() == null || request.template() == null) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "a cluster and a node template are required");
    }
    if (!KubeVersion.isValid(request.template().targetVersion())) {
      throw refuse(UpgradeFailures.INVALID_REQUEST,
          "'" + request.template().targetVersion() + "' is not a Kubernetes version like v1.31.2+k3s1");
    }
    if (request.soakSeconds() < 0) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "soakSeconds must be >= 0");
    }
  }

  /**
   * Every rule of DESIGN s.6 for the control plane, before anything changes. Returns each node's
   * child request (building them validates the Machines).
   */
  private Map<String, NodeUpgradeRequest> checkControlPlanes(ClusterInventory inventory) {
    controlPlanes = inventory.machines().stream().filter(m -> m.role() == NodeRole.CONTROL_PLANE).toList();
    if (controlPlanes.isEmpty()) {
      throw refuse(UpgradeFailures.INVALID_REQUEST, "cluster " + cluster() + " has no control-plane Machines");
    }
    Map<String, NodeUpgradeRequest> requests = new LinkedHashMap<>();
    for (MachineInfo m : controlPlanes) {
      try {
        requests.put(m.nodeName(), template().forNode(m.target(cluster())));
      } catch (IllegalArgumentException e) {
        throw refuse(UpgradeFailures.INVALID_REQUEST, "Machine " + m.name() + ": " + e.getMessage());
      }
    }
    ClusterPreflight.versionSkew(controlPlanes, target())
        .ifPresent(why -> {
          throw refuse(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, why);
        });

    List<String> names = controlPlanes.stream().map(MachineInfo::nodeName).toList();
    NodesState states =
        preflight("inspecting the control-plane nodes", UpgradeFailures.PREFLIGHT_FAILED,
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
      throw refuse(UpgradeFailures.NODE_NOT_FOUND,
          "control-plane Node(s) not found in the workload cluster: " + ClusterPreflight.list(missing));
    }
    if (!notReady.isEmpty()) {
      throw refuse(UpgradeFailures.NODE_NOT_READY,
          "control-plane node(s) not Ready: " + ClusterPreflight.list(notReady));
    }

    for (MachineInfo m : controlPlanes) {
      NodeState state = byName.get(m.nodeName());
      if (target().equals(state.kubeletVersion())) {
        continue;
      }
      NodeUpgradeRequest child = requests.get(m.nodeName());
      HostFacts facts =
          preflight("inspecting the host of " + m.nodeName(), UpgradeFailures.PREFLIGHT_FAILED,
              () -> hosts.inspectHost(new HostInspectRequest(
                  child.hostAccess(), child.distribution(), NodeRole.CONTROL_PLANE, child.profile(), child.artifacts())));
      Optional<ApplicationFailure> refusal = NodePreflight.refusal(child, state, facts);
      if (refusal.isPresent()) {
        throw refuse(refusal.get().getType(), refusal.get().getOriginalMessage());
      }
    }
    preflight("verifying the artifacts of " + target(), UpgradeFailures.ARTIFACT_UNAVAILABLE,
        () -> hosts.verifyArtifacts(new ArtifactCheckRequest(template().artifacts())));
    warnAboutBudgets();

    book.load(controlPlanes, List.of());
    for (MachineInfo m : controlPlanes) {
      if (ClusterPreflight.atTarget(m, observed.get(m.nodeName()), target())) {
        book.alreadyAtTarget(m.nodeName(), target());
      }
    }
    return requests;
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

  /** The etcd snapshot on the first control-plane node, unless every one already runs the target. */
  private void snapshotEtcd(NodeUpgradeRequest first) {
    if (controlPlanes.stream().allMatch(m -> target().equals(observed.get(m.nodeName())))) {
      return;
    }
    String name = ClusterPreflight.snapshotName(target());
    String node = first.node().nodeName();
    setPhase(RunPhase.PREFLIGHT, "taking etcd snapshot " + name + " on " + node);
    try {
      EtcdSnapshotResult snapshot =
          hosts.snapshotEtcd(new EtcdSnapshotRequest(first.hostAccess(), first.distribution(), first.profile(), name));
      setEtcdSnapshot(snapshot.name());
      log.info("etcd snapshot {} on {} at {}{}", snapshot.name(), node, snapshot.location(),
              snapshot.alreadyTaken() ? " (taken by an earlier attempt)" : "");
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      throw refuse(Failures.typeOf(e, UpgradeFailures.ETCD_SNAPSHOT_FAILED),
          "etcd snapshot " + name + " on " + node + " failed: " + Failures.describe(e));
    }
  }

  // ---- the node loop's control-plane rules ------------------------------------------------------

  @Override
  protected int window() {
    return 1;
  }

  @Override
  protected String maxUnavailable() {
    return "1";
  }

  @Override
  protected void checkMaxUnavailable(String value) {
    throw new IllegalStateException("control-plane nodes are upgraded one at a time; maxUnavailable cannot change");
  }

  @Override
  protected String applyMaxUnavailable(String value) {
    throw new IllegalStateException("control-plane nodes are upgraded one at a time");
  }

  /**
   * The health gate: every control-plane node Ready at the version it should run now (the target
   * once upgraded, what preflight saw otherwise), the apiserver ready and, on k3s, every server an
   * etcd voter.
   */
  @Override
  protected void beforeNode(MachineInfo machine) {
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
  @Override
  protected NodeUpgradeRequest requestFor(MachineInfo machine) {
    NodeUpgradeRequest request = super.requestFor(machine);
    if (!template().distribution().hasUpgradeCommand()) {
      return request;
    }
    boolean applied =
        controlPlanes.stream()
            .anyMatch(m -> target().equals(observed.get(m.nodeName()))
                || book.status(m.nodeName()).phase() == NodePhase.UPGRADED);
    return request.withFirstControlPlane(!applied);
  }

  private String expectedVersion(MachineInfo m) {
    NodeStatus status = book.status(m.nodeName());
    return status.phase() == NodePhase.UPGRADED ? target() : observed.get(m.nodeName());
  }

  // ---- end --------------------------------------------------------------------------------------

  /**
   * Pauses the control-plane object for the run (before any Machine records the new version), so
   * its controller never sees an upgraded Machine as outdated and replaces it. Recording the
   * version at the end unpauses it.
   */
  private void pauseControlPlane(ObjectRef controlPlane) {
    if (book.nextPending().isEmpty()) {
      return; // every control plane already runs the target: nothing will race
    }
    try {
      BookkeepingResult done = clusterApi.pauseControlPlane(
          new ControlPlaneVersionRequest(cluster().namespace(), controlPlane, target(), Workflow.getInfo().getWorkflowId()));
      pause.paused();
      log.info("{} {}: {}", controlPlane.kind(), controlPlane.name(),
          done == null || done.patches().isEmpty() ? "already paused" : String.join("; ", done.patches()));
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      throw refuse(Failures.typeOf(e, UpgradeFailures.KUBERNETES_API_ERROR),
          "could not pause " + controlPlane.kind() + " " + controlPlane.name() + ": " + Failures.describe(e)
              + "; nothing was changed");
    }
  }

  private void recordVersion(ObjectRef controlPlane) {
    String object = controlPlane.kind() + " " + controlPlane.name();
    if (book.aborting()) {
      String note = pause.releaseOrKeep(cluster(), controlPlane, target(), this::warn);
      end(RunPhase.ABORTED, "aborted: " + counts() + "; " + target() + " not recorded on " + object + note);
      return;
    }
    if (!book.allUpgraded()) {
      List<String> skipped =
          book.statuses().stream().filter(s -> s.phase() == NodePhase.SKIPPED).map(NodeStatus::node).toList();
      String note = pause.releaseOrKeep(cluster(), controlPlane, target(), this::warn);
      end(outcome(), counts() + "; " + target() + " not recorded on " + object + " because "
          + ClusterPreflight.list(skipped) + " stayed on the old version (skipped)" + note);
      return;
    }
    book.finish();
    setPhase(RunPhase.RECORDING, "recording " + target() + " on " + object);
    try {
      BookkeepingResult done =
          clusterApi.recordControlPlaneVersion(
              new ControlPlaneVersionRequest(
                  cluster().namespace(), controlPlane, target(), Workflow.getInfo().getWorkflowId()));
      end(RunPhase.SUCCEEDED, "every control-plane node runs " + target() + "; "
          + (done == null || done.patches().isEmpty() ? object + " already recorded it" : String.join("; ", done.patches())));
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      end(RunPhase.FAILED, "every control-plane node runs " + target() + " but recording it on " + object
          + " failed: " + Failures.describe(e) + "; set its spec.version to " + target()
          + " so CAPI does not roll the machines");
    }
  }

  private ControlPlaneUpgradeResult result() {
    return new ControlPlaneUpgradeResult(
        cluster(),
        target(),
        etcdSnapshot(),
        book.upgraded(),
        book.failed(),
        book.skipped(),
        book.aborting(),
        book.statuses(),
        pause.leftPaused(),
        message());
  }
}
