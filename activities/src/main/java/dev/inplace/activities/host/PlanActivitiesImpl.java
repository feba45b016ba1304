package dev.inplace.activities.host;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.PlanActivities;
import dev.inplace.workflows.api.UpgradePlan.Script;
import dev.inplace.workflows.api.UpgradePlan.Step;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Each planned node's steps and the scripts they run, rendered by {@link HostScriptPlan}: the
 * templates and renderer of {@link HostActivitiesImpl}, for the template's distribution ({@link
 * HostDistribution#of}) and host layout. A new distribution plugs in there and gets its plan here.
 * Connects to nothing, changes nothing; used by the Plan workflow and by the dryRun of the custom
 * resources alike.
 */
public final class PlanActivitiesImpl implements PlanActivities {

  @Override
  public RenderedSteps renderSteps(RenderStepsRequest request) {
    return render(request);
  }

  /** The same as the activity, for callers outside a workflow (the watcher's dryRun). */
  public static RenderedSteps render(RenderStepsRequest request) {
    NodeUpgradeTemplate t = request.template();
    HostScriptPlan scripts = HostScriptPlan.of(t.distribution());
    String command = HostScriptPlan.command(t.ssh());
    Map<String, Script> rendered = new LinkedHashMap<>();
    List<List<Step>> steps = new ArrayList<>();
    for (PlanSlot slot : request.slots()) {
      if (!slot.upgrade()) {
        steps.add(List.of());
        continue;
      }
      List<Step> node = new ArrayList<>();
      if (slot.snapshotName() != null) {
        node.add(new Step("snapshot", "etcd snapshot " + slot.snapshotName() + " on " + slot.snapshotNode()
            + " before any node changes",
            script(rendered, "etcd-snapshot", scripts.etcdSnapshot(t.profile(), slot.snapshotName()), command), false));
      }
      node.addAll(nodeSteps(scripts, rendered, command, t, slot.machine(), slot.firstControlPlane()));
      steps.add(List.copyOf(node));
    }
    return new RenderedSteps(steps, new ArrayList<>(rendered.values()));
  }

  private static List<Step> nodeSteps(
      HostScriptPlan scripts, Map<String, Script> rendered, String command, NodeUpgradeTemplate t, MachineInfo m,
      boolean firstControlPlane) {
    HostProfile profile = t.profile();
    boolean controlPlane = m.role() == NodeRole.CONTROL_PLANE;
    NodeRole role = m.role();
    String roleName = controlPlane ? "server" : "agent";
    List<Artifact> artifacts = t.artifacts();
    String node = m.nodeName();
    List<Step> steps = new ArrayList<>();
    steps.add(new Step("preflight",
        "annotate Machine " + m.name() + " " + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION
            + "; check Node " + node + " is Ready, then read the host's arch, free disk, installed files and version over SSH",
        script(rendered, "inspect-" + roleName, scripts.inspect(profile, role, artifacts), command), false));
    steps.add(new Step("stage", "report which artifacts are already staged or installed",
        script(rendered, "stage-prepare", scripts.stagePrepare(profile, artifacts), command), false));
    for (Artifact a : artifacts) {
      steps.add(new Step("stage",
          "upload " + a.name() + " (" + a.sizeBytes() + " bytes, sha256 " + a.sha256() + ") over SFTP to "
              + HostScriptPlan.uploadPath(profile, a) + " unless present, then check its digest and rename it",
          script(rendered, "stage-commit-" + a.name(), scripts.stageCommit(profile, a), command), false));
    }
    steps.add(new Step("backup", "keep the current binaries as <name>.prev in " + profile.backupDir(),
        script(rendered, "backup", scripts.backup(profile, artifacts), command), false));
    steps.add(new Step("cordon", "cordon Node " + node + " (spec.unschedulable=true)", null, false));
    steps.add(new Step("drain", drain(t.drain()), null, false));
    steps.add(new Step("install", "put each staged artifact in place with an atomic rename",
        script(rendered, "install", scripts.install(profile, artifacts), command), false));
    if (scripts.hasUpgradeCommand()) {
      String mode = firstControlPlane ? "apply" : "node";
      steps.add(new Step("upgrade",
          t.distribution().name().toLowerCase(Locale.ROOT) + " upgrade " + mode
              + (firstControlPlane ? " " + t.targetVersion() + " (this node upgrades the cluster's control plane)" : ""),
          script(rendered, "upgrade-" + (controlPlane ? (firstControlPlane ? "apply" : "control-plane") : "worker"),
              scripts.upgrade(profile, role, t.targetVersion(), firstControlPlane), command), false));
    }
    steps.add(new Step("restart", "restart " + profile.serviceFor(role) + " and wait until it is active",
        script(rendered, "restart-" + roleName, scripts.restart(profile, role), command), false));
    steps.add(new Step("verify",
        "wait up to " + t.readyTimeoutSeconds() + "s for Node " + node + " Ready with kubelet " + t.targetVersion()
            + (controlPlane ? ", the apiserver ready" : "")
            + (controlPlane && t.distribution().reportsEtcdVoterCondition() ? " and every server an etcd voter" : ""),
        null, false));
    steps.add(new Step("uncordon", "uncordon Node " + node, null, false));
    steps.add(new Step("record",
        "set Machine " + m.name() + " spec.version to " + t.targetVersion() + "; remove "
            + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION,
        null, false));
    steps.add(new Step("restore",
        "if install, restart or verify fails: put the previous binaries back, restart, wait for Ready at the old version",
        script(rendered, "restore", scripts.restore(profile, artifacts), command), true));
    steps.add(new Step("release", "if a step after cordon fails: uncordon Node " + node + " (cordoned by this run)",
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
        + "s; then " + (d.onBlocked() == PdbBlockedAction.DELETE
            ? "delete the pods a budget still protects" : "fail the node (it is put back)");
  }

  private static String script(Map<String, Script> rendered, String name, RemoteScript script, String command) {
    rendered.putIfAbsent(name, new Script(name, script.step(), command, script.text()));
    return name;
  }
}
