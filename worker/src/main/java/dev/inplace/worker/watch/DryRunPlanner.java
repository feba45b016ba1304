package dev.inplace.worker.watch;

import dev.inplace.activities.host.HostScriptPlan;
import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.worker.crd.PlannedNode;
import dev.inplace.worker.crd.PlannedScript;
import dev.inplace.worker.crd.PlannedStep;
import dev.inplace.worker.crd.UpgradePlan;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The plan of a dry run: the nodes in the order their run would start them (control planes one at
 * a time, the first taking the etcd snapshot; workers pool by pool in waves of maxUnavailable),
 * each node's steps, and the remote scripts rendered by the activities' own templates and renderer
 * for the run's distribution ({@link HostScriptPlan#of}).
 */
final class DryRunPlanner {
  static final String UPGRADE = "Upgrade";
  static final String ALREADY_AT_TARGET = "AlreadyAtTarget";

  private DryRunPlanner() {}

  static UpgradePlan plan(ResolvedUpgrade resolved, boolean controlPlane) throws SpecRefusal {
    NodeUpgradeTemplate t = resolved.template();
    HostScriptPlan scripts;
    try {
      scripts = HostScriptPlan.of(t.distribution());
    } catch (IllegalArgumentException e) {
      throw new SpecRefusal(UpgradeFailures.INVALID_REQUEST, "dry run: " + e.getMessage());
    }
    Map<String, PlannedScript> rendered = new LinkedHashMap<>();
    String command = HostScriptPlan.command(t.ssh());
    List<PlannedNode> nodes = new ArrayList<>();
    String target = t.targetVersion();
    int order = 0;
    String summary;
    if (controlPlane) {
      List<MachineInfo> machines = SpecResolver.role(resolved.inventory(), NodeRole.CONTROL_PLANE);
      boolean snapshotTaken = machines.stream().allMatch(m -> atTarget(m, target));
      String snapshot = snapshotName(target);
      int wave = 0;
      boolean snapshotPending = !snapshotTaken;
      // As ControlPlaneUpgrade decides: the first node upgraded while no control plane runs the
      // target applies the new version to the cluster (kubeadm upgrade apply).
      boolean applyPending = machines.stream().noneMatch(m -> target.equals(m.kubeletVersion()));
      for (MachineInfo m : machines) {
        PlannedNode node = node(m, ++order, target);
        if (!atTarget(m, target)) {
          node.setWave(++wave);
          List<PlannedStep> steps = new ArrayList<>();
          if (snapshotPending) {
            // Taken on the first control-plane node before any node changes.
            String first = machines.get(0).nodeName();
            steps.add(new PlannedStep("snapshot", "etcd snapshot " + snapshot + " on " + first + " before any node changes",
                script(rendered, "etcd-snapshot", scripts.etcdSnapshot(t.profile(), snapshot), command), false));
            snapshotPending = false;
          }
          steps.addAll(steps(scripts, rendered, command, t, m, true, applyPending));
          applyPending = false;
          node.setSteps(steps);
        }
        nodes.add(node);
      }
      summary = "ControlPlaneUpgrade of " + resolved.cluster() + " to " + target + ": " + machines.size()
          + " control-plane node(s), one at a time, each after every control plane is healthy"
          + (snapshotTaken ? "" : "; etcd snapshot " + snapshot + " first") + "; " + upgrading(nodes) + artifacts(t);
    } else {
      int window = 0;
      for (String pool : resolved.pools()) {
        List<MachineInfo> machines =
            SpecResolver.role(resolved.inventory(), NodeRole.WORKER).stream().filter(m -> pool.equals(m.pool())).toList();
        window = windowFor(resolved.maxUnavailable(), machines.size());
        int index = 0;
        for (MachineInfo m : machines) {
          PlannedNode node = node(m, ++order, target);
          if (!atTarget(m, target)) {
            node.setWave(index++ / window + 1);
            node.setSteps(steps(scripts, rendered, command, t, m, false, false));
          }
          nodes.add(node);
        }
      }
      summary = "WorkersUpgrade of " + resolved.cluster() + " to " + target + ": MachineDeployment(s) "
          + String.join(", ", resolved.pools()) + " in parallel, each " + resolved.maxUnavailable()
          + " node(s) at a time (failure policy " + resolved.failurePolicy() + "); " + upgrading(nodes) + artifacts(t);
    }
    return new UpgradePlan().setSummary(summary).setNodes(nodes).setScripts(new ArrayList<>(rendered.values()));
  }

  private static List<PlannedStep> steps(
      HostScriptPlan scripts,
      Map<String, PlannedScript> rendered,
      String command,
      NodeUpgradeTemplate t,
      MachineInfo m,
      boolean controlPlane,
      boolean firstControlPlane) {
    HostProfile profile = t.profile();
    NodeRole role = controlPlane ? NodeRole.CONTROL_PLANE : NodeRole.WORKER;
    String roleName = controlPlane ? "server" : "agent";
    List<Artifact> artifacts = t.artifacts();
    String node = m.nodeName();
    List<PlannedStep> steps = new ArrayList<>();
    steps.add(new PlannedStep("preflight",
        "annotate Machine " + m.name() + " " + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION
            + "; check Node " + node + " is Ready, then read the host's arch, free disk, installed files and version over SSH",
        script(rendered, "inspect-" + roleName, scripts.inspect(profile, role, artifacts), command), false));
    steps.add(new PlannedStep("stage", "report which artifacts are already staged or installed",
        script(rendered, "stage-prepare", scripts.stagePrepare(profile, artifacts), command), false));
    for (Artifact a : artifacts) {
      steps.add(new PlannedStep("stage",
          "upload " + a.name() + " (" + a.sizeBytes() + " bytes, sha256 " + a.sha256() + ") over SFTP to "
              + HostScriptPlan.uploadPath(profile, a) + " unless present, then check its digest and rename it",
          script(rendered, "stage-commit-" + a.name(), scripts.stageCommit(profile, a), command), false));
    }
    steps.add(new PlannedStep("cordon", "cordon Node " + node + " (spec.unschedulable=true)", null, false));
    steps.add(new PlannedStep("drain", drain(t.drain()), null, false));
    steps.add(new PlannedStep("backup", "keep the current binaries as <name>.prev in " + profile.backupDir(),
        script(rendered, "backup", scripts.backup(profile, artifacts), command), false));
    steps.add(new PlannedStep("install", "put each staged artifact in place with an atomic rename",
        script(rendered, "install", scripts.install(profile, artifacts), command), false));
    if (scripts.hasUpgradeCommand()) {
      String mode = firstControlPlane ? "apply" : "node";
      steps.add(new PlannedStep("upgrade",
          t.distribution().name().toLowerCase(java.util.Locale.ROOT) + " upgrade " + mode
              + (firstControlPlane ? " " + t.targetVersion() + " (this node upgrades the cluster's control plane)" : ""),
          script(rendered, "upgrade-" + (controlPlane ? (firstControlPlane ? "apply" : "control-plane") : "worker"),
              scripts.upgrade(profile, role, t.targetVersion(), firstControlPlane), command), false));
    }
    steps.add(new PlannedStep("restart", "restart " + profile.serviceFor(role) + " and wait until it is active",
        script(rendered, "restart-" + roleName, scripts.restart(profile, role), command), false));
    steps.add(new PlannedStep("verify",
        "wait up to " + t.readyTimeoutSeconds() + "s for Node " + node + " Ready with kubelet " + t.targetVersion()
            + (controlPlane ? ", the apiserver ready" : "")
            + (controlPlane && t.distribution().reportsEtcdVoterCondition() ? " and every server an etcd voter" : ""),
        null, false));
    steps.add(new PlannedStep("uncordon", "uncordon Node " + node, null, false));
    steps.add(new PlannedStep("record",
        "set Machine " + m.name() + " spec.version to " + t.targetVersion() + "; remove "
            + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION,
        null, false));
    steps.add(new PlannedStep("restore",
        "if install, restart or verify fails: put the previous binaries back, restart, wait for Ready at the old version",
        script(rendered, "restore", scripts.restore(profile, artifacts), command), true));
    steps.add(new PlannedStep("release", "if a step after cordon fails: uncordon Node " + node + " (cordoned by this run)",
        null, true));
    return steps;
  }

  private static String drain(DrainOptions d) {
    if (d.skip()) {
      return "no drain (drain.skip)";
    }
    return "evict pods through the Eviction API honouring PodDisruptionBudgets (DaemonSet and mirror pods stay"
        + (d.deleteEmptyDirData() ? "; emptyDir data is lost" : "; pods with emptyDir block")
        + (d.force() ? "; bare pods are evicted too" : "") + "), for up to " + d.timeoutSeconds()
        + "s; then " + (d.onBlocked() == dev.inplace.workflows.api.PdbBlockedAction.DELETE
            ? "delete the pods a budget still protects" : "fail the node (it is put back)");
  }

  private static String script(Map<String, PlannedScript> rendered, String name, RemoteScript script, String command) {
    rendered.putIfAbsent(name, new PlannedScript(name, script.step(), command, script.text()));
    return name;
  }

  private static PlannedNode node(MachineInfo m, int order, String target) {
    return new PlannedNode()
        .setOrder(order)
        .setMachine(m.name())
        .setNode(m.nodeName())
        .setRole(Texts.camel(m.role()))
        .setPool(m.pool() == null || m.pool().isEmpty() ? null : m.pool())
        .setCurrentVersion(SpecResolver.current(m).map(Object::toString).orElse(null))
        .setAction(atTarget(m, target) ? ALREADY_AT_TARGET : UPGRADE);
  }

  /** Nothing to do: its kubelet and its Machine already say the target (as the runs decide). */
  private static boolean atTarget(MachineInfo m, String target) {
    return target.equals(m.kubeletVersion()) && target.equals(m.version());
  }

  /** {@code inplace-pre-v1-31-2-k3s1}, as ControlPlaneUpgrade names it. */
  static String snapshotName(String target) {
    return "inplace-pre-" + target.replaceAll("[^a-z0-9-]", "-");
  }

  /** The window of a pool, as the WorkersUpgrade run sizes it: a percent rounds up, at least 1. */
  static int windowFor(String maxUnavailable, int poolSize) {
    if (maxUnavailable.endsWith("%")) {
      int percent = Integer.parseInt(maxUnavailable.substring(0, maxUnavailable.length() - 1));
      return Math.max(1, (percent * poolSize + 99) / 100);
    }
    return Math.max(1, Integer.parseInt(maxUnavailable));
  }

  private static String upgrading(List<PlannedNode> nodes) {
    long upgrade = nodes.stream().filter(n -> UPGRADE.equals(n.getAction())).count();
    return upgrade + " to upgrade, " + (nodes.size() - upgrade) + " already at target";
  }

  private static String artifacts(NodeUpgradeTemplate t) {
    return "; artifacts: " + String.join(", ", t.artifacts().stream().map(Artifact::name).toList());
  }
}
