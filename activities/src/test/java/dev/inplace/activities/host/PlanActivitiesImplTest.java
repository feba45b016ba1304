package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.PlanActivities.PlanSlot;
import dev.inplace.workflows.api.PlanActivities.RenderStepsRequest;
import dev.inplace.workflows.api.PlanActivities.RenderedSteps;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.UpgradePlan;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The plan's steps and scripts per distribution: the host activities' own scripts, nothing run. */
class PlanActivitiesImplTest {
  private static final MachineInfo CP =
      new MachineInfo("m-cp-0", "cp-0", NodeRole.CONTROL_PLANE, "10.0.0.1", "v1.30.6", "v1.30.6", "");
  private static final MachineInfo WORKER =
      new MachineInfo("m-w-0", "w-0", NodeRole.WORKER, "10.0.1.1", "v1.30.6", "v1.30.6", "md-a");
  private static final MachineInfo DONE =
      new MachineInfo("m-w-1", "w-1", NodeRole.WORKER, "10.0.1.2", "v1.31.2", "v1.31.2", "md-a");

  private static NodeUpgradeTemplate template(Distribution d, String version, Artifact artifact) {
    return new NodeUpgradeTemplate(d, version, List.of(artifact), d.defaultProfile(),
        new SshSettings("inplace", 22, "key", "hosts", null), new DrainOptions(60, true, false, PdbBlockedAction.FAIL, false),
        300, 0, "amd64");
  }

  private static RenderedSteps render(NodeUpgradeTemplate t) {
    return PlanActivitiesImpl.render(new RenderStepsRequest(t, List.of(
        new PlanSlot(1, 1, "control-plane", CP, true, true, "inplace-pre-x", "cp-0"),
        new PlanSlot(2, 2, "md-a", WORKER, true, false, null, null),
        new PlanSlot(3, 0, "md-a", DONE, false, false, null, null))));
  }

  private static UpgradePlan.Script script(RenderedSteps r, String name) {
    return r.scripts().stream().filter(s -> s.name().equals(name)).findFirst().orElseThrow(() -> new AssertionError(name));
  }

  private static List<String> steps(List<UpgradePlan.Step> steps) {
    return steps.stream().map(UpgradePlan.Step::step).toList();
  }

  @Test
  void kubeadmAppliesOnTheFirstControlPlaneAndRendersTheActivitiesOwnScripts() {
    Artifact kubeadm = new Artifact("kubeadm", ArtifactKind.BINARY, "/srv/kubeadm", "ab".repeat(32), 10, "/usr/bin/kubeadm", "0755");
    NodeUpgradeTemplate t = template(Distribution.KUBEADM, "v1.31.2", kubeadm);
    RenderedSteps r = render(t);
    assertEquals(List.of("snapshot", "preflight", "stage", "stage", "backup", "cordon", "drain", "install", "upgrade",
        "restart", "verify", "uncordon", "record", "restore", "release"), steps(r.steps().get(0)));
    assertEquals(List.of(), r.steps().get(2), "a node at the target has no steps");
    HostScriptPlan same = HostScriptPlan.of(Distribution.KUBEADM);
    assertEquals(same.upgrade(t.profile(), NodeRole.CONTROL_PLANE, "v1.31.2", true).text(), script(r, "upgrade-apply").text());
    assertEquals(same.install(t.profile(), t.artifacts()).text(), script(r, "install").text());
    assertTrue(script(r, "upgrade-worker").text().contains("mode='node'"));
    assertTrue(script(r, "restart-agent").text().contains("service='kubelet'"));
    assertEquals("sudo -n bash -s", script(r, "install").command());
  }

  @Test
  void k3sHasNoUpgradeCommandAndRestartsItsOwnServices() {
    Artifact k3s = new Artifact("k3s", ArtifactKind.BINARY, "/srv/k3s", "cd".repeat(32), 10, "/usr/local/bin/k3s", "0755");
    RenderedSteps r = render(template(Distribution.K3S, "v1.31.2+k3s1", k3s));
    assertFalse(steps(r.steps().get(0)).contains("upgrade"));
    assertTrue(script(r, "restart-server").text().contains("service='k3s'"));
    assertTrue(script(r, "restart-agent").text().contains("service='k3s-agent'"));
    assertTrue(script(r, "etcd-snapshot").text().contains("inplace-pre-x"));
  }

  @Test
  void k0sPlansThroughTheSameSeamWithItsLayout() {
    Artifact k0s = new Artifact("k0s", ArtifactKind.BINARY, "/srv/k0s", "ef".repeat(32), 10, "/usr/local/bin/k0s", "0755");
    NodeUpgradeTemplate t = template(Distribution.K0S, "v1.31.2+k0s.0", k0s);
    RenderedSteps r = render(t);
    assertFalse(steps(r.steps().get(0)).contains("upgrade"));
    assertEquals(HostScriptPlan.of(Distribution.K0S).restart(t.profile(), NodeRole.CONTROL_PLANE).text(),
        script(r, "restart-server").text());
    assertTrue(script(r, "restart-server").text().contains("k0scontroller"), script(r, "restart-server").text());
    assertTrue(script(r, "etcd-snapshot").text().contains("k0s backup") || script(r, "etcd-snapshot").text().contains("backup"));
  }
}
