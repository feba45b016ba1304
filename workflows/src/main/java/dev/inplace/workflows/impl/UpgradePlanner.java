package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.PlanActivities.PlanSlot;
import dev.inplace.workflows.api.PlanActivities.RenderedSteps;
import dev.inplace.workflows.api.PlanWorkflow.PlanRequest;
import dev.inplace.workflows.api.UpgradePlan;
import dev.inplace.workflows.api.UpgradePlan.Finding;
import dev.inplace.workflows.api.UpgradePlan.Severity;
import dev.inplace.workflows.api.UpgradePlan.Wave;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import io.temporal.failure.ApplicationFailure;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * A plan as pure functions of what was observed, shared by the Plan workflow and the custom
 * resources' dryRun: the node order and waves come from {@link RunOrder}, the refusals from the
 * same preflight rules the runs apply ({@link ClusterPreflight}, {@link NodePreflight}). The steps
 * and scripts come from {@code PlanActivities} (the activities' renderer).
 */
public final class UpgradePlanner {
  /** The group of control-plane waves. */
  public static final String CONTROL_PLANE = "control-plane";
  /** Reason of the note that the hosts were not read. */
  public static final String HOSTS_NOT_INSPECTED = "HostsNotInspected";
  public static final String MAINTENANCE_WINDOW = "MaintenanceWindow";
  public static final String NOTHING_TO_DO = "NothingToDo";

  private UpgradePlanner() {}

  /**
   * What was read for the plan; any part may be missing.
   *
   * @param nodes the planned Nodes as the workload cluster reports them, or null when not read
   * @param nodesError why they could not be read, or null
   * @param hosts what the inspect script found on each host, by node name
   * @param hostErrors why a host could not be inspected: node name to {@code type: message}
   * @param budgets blocking PodDisruptionBudgets, or null when not read
   */
  public record Observations(
      NodesState nodes,
      String nodesError,
      boolean hostsInspected,
      Map<String, HostFacts> hosts,
      Map<String, String> hostErrors,
      BudgetReport budgets,
      String budgetsError) {
    public Observations {
      hosts = hosts == null ? Map.of() : hosts;
      hostErrors = hostErrors == null ? Map.of() : hostErrors;
    }

    /** Nothing read beyond the inventory (a custom resource's dryRun). */
    public static Observations inventoryOnly() {
      return new Observations(null, null, false, Map.of(), Map.of(), null, null);
    }
  }

  /** The pools a request plans: the ones it names, else every MachineDeployment of the cluster. */
  public static List<String> pools(PlanRequest request, ClusterInventory inventory) {
    return request.machineDeployments().isEmpty() ? RunOrder.pools(inventory) : request.machineDeployments();
  }

  /**
   * Every planned Machine in the order the runs start them. Control planes: one per wave, the etcd
   * snapshot before the first, and (distributions with an upgrade command) the first one started
   * while no control plane runs the target applies it. Workers: each pool's nodes in windows of
   * maxUnavailable, numbered after the control plane's waves. {@code kubelets} is what the Nodes
   * report (by node name); a Machine not in it counts with the version its inventory mirrors.
   */
  public static List<PlanSlot> slots(PlanRequest request, ClusterInventory inventory, Map<String, String> kubelets) {
    return slots(request, inventory, kubelets, VersionMatch.AS_REPORTED);
  }

  /**
   * As above, holding versions against the target by {@code match}: the rule of the runs the plan
   * stands for (the Plan workflow's own {@link ClusterPreflight#versionMatch}; the newest rule
   * outside a workflow).
   */
  static List<PlanSlot> slots(
      PlanRequest request, ClusterInventory inventory, Map<String, String> kubelets, VersionMatch match) {
    String target = request.template().targetVersion();
    List<PlanSlot> slots = new ArrayList<>();
    int order = 0;
    int wave = 0;
    if (request.scope().controlPlane()) {
      List<MachineInfo> controlPlanes = RunOrder.controlPlanes(inventory);
      Map<String, String> observed = new LinkedHashMap<>();
      for (MachineInfo m : controlPlanes) {
        observed.put(m.nodeName(), kubelets.getOrDefault(m.nodeName(), m.kubeletVersion()));
      }
      boolean snapshotPending =
          !controlPlanes.isEmpty() && RunOrder.takesEtcdSnapshot(controlPlanes, observed, target, match);
      boolean applyPending = request.template().distribution().hasUpgradeCommand()
          && controlPlanes.stream().noneMatch(m -> match.runs(observed.get(m.nodeName()), target));
      for (MachineInfo m : controlPlanes) {
        boolean upgrade = !RunOrder.atTarget(m, observed.get(m.nodeName()), target, match);
        if (!upgrade) {
          slots.add(new PlanSlot(++order, 0, CONTROL_PLANE, m, false, false, null, null));
          continue;
        }
        slots.add(new PlanSlot(++order, ++wave, CONTROL_PLANE, m, true, applyPending,
            snapshotPending ? RunOrder.snapshotName(target) : null,
            snapshotPending ? controlPlanes.get(0).nodeName() : null));
        snapshotPending = false;
        applyPending = false;
      }
    }
    if (request.scope().workers()) {
      List<String> known = RunOrder.pools(inventory);
      int after = wave;
      for (String pool : pools(request, inventory)) {
        if (!known.contains(pool)) {
          continue; // a finding says so
        }
        List<MachineInfo> machines = RunOrder.pool(inventory, pool);
        int window = RunOrder.window(request.maxUnavailable(), machines.size());
        int index = 0;
        for (MachineInfo m : machines) {
          // As WorkersUpgrade decides: the inventory's kubelet version (the control plane's gate ran before).
          boolean upgrade = !RunOrder.atTarget(m, m.kubeletVersion(), target, match);
          int w = upgrade ? after + index++ / window + 1 : 0;
          wave = Math.max(wave, w);
          slots.add(new PlanSlot(++order, w, pool, m, upgrade, false, null, null));
        }
      }
    }
    return slots;
  }

  /** The preflight findings: what the run would refuse (errors), what would slow it (warnings), notes. */
  public static List<Finding> findings(
      PlanRequest request, ClusterInventory inventory, List<PlanSlot> slots, Observations seen, long nowMillis) {
    return findings(request, inventory, slots, seen, nowMillis, VersionMatch.AS_REPORTED);
  }

  /** As above, with the version rule of {@link #slots(PlanRequest, ClusterInventory, Map, VersionMatch)}. */
  static List<Finding> findings(
      PlanRequest request, ClusterInventory inventory, List<PlanSlot> slots, Observations seen, long nowMillis,
      VersionMatch match) {
    String target = request.template().targetVersion();
    List<Finding> findings = new ArrayList<>();
    if (request.scope().controlPlane()) {
      List<MachineInfo> controlPlanes = RunOrder.controlPlanes(inventory);
      if (controlPlanes.isEmpty()) {
        findings.add(error(UpgradeFailures.INVALID_REQUEST, null,
            "cluster " + request.cluster() + " has no control-plane Machines"));
      }
      ClusterPreflight.versionSkew(controlPlanes, target)
          .ifPresent(why -> findings.add(error(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, null, why)));
    }
    if (request.scope().workers()) {
      List<String> known = RunOrder.pools(inventory);
      for (String pool : pools(request, inventory)) {
        if (!known.contains(pool)) {
          findings.add(error(UpgradeFailures.INVALID_REQUEST, null, "MachineDeployment " + pool + " not found in cluster "
              + request.cluster() + "; it has: " + (known.isEmpty() ? "none" : ClusterPreflight.list(known))));
          continue;
        }
        ClusterPreflight.versionSkew(RunOrder.pool(inventory, pool), target)
            .ifPresent(why -> findings.add(error(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, null, pool + ": " + why)));
      }
      if (request.scope() == dev.inplace.workflows.api.PlanWorkflow.PlanScope.WORKERS) {
        ClusterPreflight.controlPlaneBehind(RunOrder.controlPlanes(inventory), target, match)
            .ifPresent(why -> findings.add(error(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, null, why)));
      }
    }
    nodeFindings(request, slots, seen, findings, match);
    budgetFindings(request, seen, findings);
    if (request.window() != null) {
      Duration wait = request.window().waitFrom(nowMillis);
      findings.add(new Finding(Severity.INFO, MAINTENANCE_WINDOW, null, wait.isZero()
          ? "the maintenance window is open now; nodes start only while it is open"
          : "the maintenance window opens at " + Instant.ofEpochMilli(nowMillis).plus(wait) + " (in "
              + human(wait) + "); no node starts before"));
    }
    if (slots.stream().noneMatch(PlanSlot::upgrade)) {
      findings.add(new Finding(Severity.INFO, NOTHING_TO_DO, null, "every planned node already runs " + target));
    }
    return findings;
  }

  private static void nodeFindings(
      PlanRequest request, List<PlanSlot> slots, Observations seen, List<Finding> findings, VersionMatch match) {
    Map<String, NodeState> states = new LinkedHashMap<>();
    if (seen.nodes() != null) {
      seen.nodes().nodes().forEach(s -> states.put(s.nodeName(), s));
    } else if (seen.nodesError() != null) {
      findings.add(new Finding(Severity.WARNING, UpgradeFailures.KUBERNETES_API_ERROR, null,
          "could not read the Nodes of " + request.cluster() + ": " + seen.nodesError()));
    }
    for (PlanSlot slot : slots) {
      MachineInfo m = slot.machine();
      String node = m.nodeName();
      // ControlPlaneUpgrade checks every control plane; a NodeUpgrade only its own node.
      boolean checked = slot.upgrade() || m.role() == NodeRole.CONTROL_PLANE;
      if (seen.nodes() != null && checked) {
        NodeState state = states.get(node);
        if (state == null || seen.nodes().missing().contains(node)) {
          findings.add(error(UpgradeFailures.NODE_NOT_FOUND, node, "Node " + node + " not found in the workload cluster"));
          continue;
        }
        if (!state.ready()) {
          findings.add(error(UpgradeFailures.NODE_NOT_READY, node, "Node " + node + " is not Ready"));
          continue;
        }
      }
      if (!slot.upgrade()) {
        continue;
      }
      NodeUpgradeRequest child;
      try {
        child = request.template().forNode(m.target(request.cluster()));
      } catch (IllegalArgumentException e) {
        findings.add(error(UpgradeFailures.INVALID_REQUEST, node, "Machine " + m.name() + ": " + e.getMessage()));
        continue;
      }
      String hostError = seen.hostErrors().get(node);
      if (hostError != null) {
        int colon = hostError.indexOf(": ");
        findings.add(error(colon > 0 ? hostError.substring(0, colon) : UpgradeFailures.HOST_UNREACHABLE, node,
            "inspecting the host of " + node + " failed: " + (colon > 0 ? hostError.substring(colon + 2) : hostError)));
        continue;
      }
      HostFacts facts = seen.hosts().get(node);
      if (facts == null) {
        continue;
      }
      NodeState state = states.getOrDefault(node, new NodeState(node, true, false, m.kubeletVersion(), null));
      Optional<ApplicationFailure> refusal = NodePreflight.refusal(child, state, facts, match);
      refusal.ifPresent(f -> findings.add(error(f.getType(), node, f.getOriginalMessage())));
      if (refusal.isEmpty()) {
        findings.add(new Finding(Severity.INFO, "HostInspected", node, "host " + node + ": " + facts.arch() + ", "
            + facts.stagingFreeBytes() / (1024 * 1024) + " MiB free in " + child.profile().stagingDir()
            + ", installed " + (facts.installedVersion() == null ? "version unknown" : facts.installedVersion())
            + (facts.serviceActive() ? ", service active" : ", service NOT active")));
      }
    }
    if (!seen.hostsInspected()) {
      findings.add(new Finding(Severity.INFO, HOSTS_NOT_INSPECTED, null,
          "hosts not inspected over SSH: the run checks each host's arch, free disk and installed files"
              + " in its own preflight"));
    }
  }

  private static void budgetFindings(PlanRequest request, Observations seen, List<Finding> findings) {
    if (request.template().drain() != null && request.template().drain().skip()) {
      return; // nothing is evicted
    }
    if (seen.budgetsError() != null) {
      findings.add(new Finding(Severity.WARNING, UpgradeFailures.KUBERNETES_API_ERROR, null,
          "could not list PodDisruptionBudgets: " + seen.budgetsError()));
    }
    if (seen.budgets() == null) {
      return;
    }
    for (BlockingBudget b : seen.budgets().blocking()) {
      var drain = request.template().drain();
      findings.add(new Finding(Severity.WARNING, UpgradeFailures.DRAIN_BLOCKED, null,
          "PodDisruptionBudget " + b.namespace() + "/" + b.name() + " allows " + b.disruptionsAllowed()
              + " disruption(s) now (" + b.expectedPods() + " pods): a drain of a node running its pods waits up to "
              + (drain == null ? "the drain timeout" : drain.timeoutSeconds() + "s") + ", then "
              + (drain != null && drain.onBlocked() == PdbBlockedAction.DELETE ? "deletes those pods" : "fails the node")));
    }
  }

  /** {@code "now"}, the next opening (ISO-8601), or null without a window. */
  public static String windowOpensAt(MaintenanceWindow window, long nowMillis) {
    if (window == null) {
      return null;
    }
    Duration wait = window.waitFrom(nowMillis);
    return wait.isZero() ? "now" : Instant.ofEpochMilli(nowMillis).plus(wait).toString();
  }

  /** The plan: slots with their rendered steps, the waves, the findings and a summary line. */
  public static UpgradePlan assemble(
      PlanRequest request, List<PlanSlot> slots, RenderedSteps rendered, List<Finding> findings,
      boolean hostsInspected, long nowMillis) {
    List<UpgradePlan.PlannedNode> nodes = new ArrayList<>();
    Map<String, List<String>> waves = new LinkedHashMap<>();
    for (int i = 0; i < slots.size(); i++) {
      PlanSlot s = slots.get(i);
      MachineInfo m = s.machine();
      nodes.add(new UpgradePlan.PlannedNode(s.order(), s.wave(), s.group(), m.name(), m.nodeName(), m.role(),
          currentVersion(m), s.upgrade() ? UpgradePlan.UPGRADE : UpgradePlan.ALREADY_AT_TARGET,
          s.upgrade() ? rendered.steps().get(i) : List.of()));
      if (s.upgrade()) {
        waves.computeIfAbsent(s.wave() + "\u0000" + s.group(), k -> new ArrayList<>()).add(m.nodeName());
      }
    }
    List<Wave> waveList = new ArrayList<>();
    waves.forEach((key, names) -> {
      int sep = key.indexOf('\u0000');
      waveList.add(new Wave(Integer.parseInt(key.substring(0, sep)), key.substring(sep + 1), List.copyOf(names)));
    });
    waveList.sort(java.util.Comparator.comparingInt(Wave::number));
    return new UpgradePlan(request.cluster(), request.template().targetVersion(), request.template().distribution(),
        request.scope(), hostsInspected, summary(request, slots, waveList, findings),
        windowOpensAt(request.window(), nowMillis), waveList, nodes, findings, rendered.scripts());
  }

  private static String summary(PlanRequest request, List<PlanSlot> slots, List<Wave> waves, List<Finding> findings) {
    long upgrade = slots.stream().filter(PlanSlot::upgrade).count();
    long errors = findings.stream().filter(f -> f.severity() == Severity.ERROR).count();
    long warnings = findings.stream().filter(f -> f.severity() == Severity.WARNING).count();
    StringBuilder s = new StringBuilder();
    s.append(request.template().distribution().name().toLowerCase(java.util.Locale.ROOT)).append(" upgrade of ")
        .append(request.cluster()).append(" to ").append(request.template().targetVersion()).append(": ")
        .append(upgrade).append(" to upgrade, ").append(slots.size() - upgrade).append(" already at target, in ")
        .append(waves.stream().mapToInt(Wave::number).max().orElse(0)).append(" wave(s)");
    slots.stream().filter(x -> x.snapshotName() != null).findFirst().ifPresent(x ->
        s.append("; etcd snapshot ").append(x.snapshotName()).append(" on ").append(x.snapshotNode()).append(" first"));
    if (request.scope().workers()) {
      s.append("; workers ").append(request.maxUnavailable() == null ? "1" : request.maxUnavailable())
          .append(" at a time per MachineDeployment");
    }
    s.append("; ").append(errors).append(" error(s), ").append(warnings).append(" warning(s)");
    if (errors > 0) {
      s.append(": the run would refuse");
    }
    return s.toString();
  }

  private static String human(Duration d) {
    long minutes = d.toMinutes();
    return minutes >= 60 ? (minutes / 60) + "h" + (minutes % 60 == 0 ? "" : (minutes % 60) + "m") : Math.max(1, minutes) + "m";
  }

  private static Finding error(String reason, String node, String message) {
    return new Finding(Severity.ERROR, reason, node, message);
  }

  /** The version a Machine runs now, as text (kubelet, else Machine.spec.version). */
  private static String currentVersion(MachineInfo m) {
    return ClusterPreflight.currentVersion(m).map(Object::toString).orElse(null);
  }
}
