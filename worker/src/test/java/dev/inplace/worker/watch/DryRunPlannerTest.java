package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.PlannedNode;
import dev.inplace.worker.crd.PlannedScript;
import dev.inplace.worker.crd.PlannedStep;
import dev.inplace.worker.crd.UpgradePlan;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.api.SshSettings;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Plans per distribution, rendered through the same seam the activities use. */
class DryRunPlannerTest {
  private static final ClusterRef CLUSTER = new ClusterRef("fleet", "edge-2");
  private static final String FROM = "v1.30.6";
  private static final String TO = "v1.31.2";

  private static ResolvedUpgrade kubeadm(List<String> pools) {
    List<MachineInfo> machines = List.of(
        new MachineInfo("cp-0", "cp-0", NodeRole.CONTROL_PLANE, "10.0.0.1", FROM, FROM, ""),
        new MachineInfo("cp-1", "cp-1", NodeRole.CONTROL_PLANE, "10.0.0.2", FROM, FROM, ""),
        new MachineInfo("w-0", "w-0", NodeRole.WORKER, "10.0.0.3", FROM, FROM, "md-a"),
        new MachineInfo("w-1", "w-1", NodeRole.WORKER, "10.0.0.4", FROM, FROM, "md-a"));
    ClusterInventory inventory = new ClusterInventory(CLUSTER,
        new ObjectRef("controlplane.cluster.x-k8s.io", "KubeadmControlPlane", "edge-2-cp"), FROM, machines,
        List.of(new ClusterInventory.PoolInfo("md-a", "md-a-1", FROM, 2)));
    Artifact kubeadm = new Artifact("kubeadm", ArtifactKind.BINARY, "/srv/kubeadm", "cd".repeat(32), 10, "/usr/bin/kubeadm", "0755");
    NodeUpgradeTemplate template = new NodeUpgradeTemplate(Distribution.KUBEADM, TO, List.of(kubeadm),
        Distribution.KUBEADM.defaultProfile(), new SshSettings("root", 22, "key", "hosts", null), DrainOptions.defaults(),
        300, 0, "amd64");
    return new ResolvedUpgrade(CLUSTER, inventory, template, null, 0, pools, "1", FailurePolicy.HALT, 0, false);
  }

  private static List<String> steps(PlannedNode node) {
    return node.getSteps().stream().map(PlannedStep::getStep).toList();
  }

  private static PlannedScript script(UpgradePlan plan, String name) {
    return plan.getScripts().stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow(() ->
        new AssertionError("no script " + name + " in " + plan.getScripts().stream().map(PlannedScript::getName).toList()));
  }

  @Test
  void aKubeadmControlPlanePlanAppliesOnTheFirstNodeAndUpgradesTheNextWithKubeadmScripts() throws Exception {
    UpgradePlan plan = DryRunPlanner.plan(kubeadm(List.of()), true, 0L);

    assertEquals(List.of("snapshot", "preflight", "stage", "stage", "backup", "cordon", "drain", "install", "upgrade",
        "restart", "verify", "uncordon", "record", "restore", "release"), steps(plan.getNodes().get(0)));
    assertTrue(steps(plan.getNodes().get(1)).contains("upgrade"));
    assertEquals("upgrade-apply", plan.getNodes().get(0).getSteps().get(8).getScript());
    assertEquals("upgrade-control-plane", plan.getNodes().get(1).getSteps().stream()
        .filter(s -> s.getStep().equals("upgrade")).findFirst().orElseThrow().getScript());
    assertTrue(script(plan, "upgrade-apply").getText().contains("mode='apply'"), script(plan, "upgrade-apply").getText());
    assertTrue(script(plan, "upgrade-control-plane").getText().contains("mode='node'"));
    assertTrue(script(plan, "restart-server").getText().contains("service='kubelet'"), "kubeadm host layout");
    assertTrue(script(plan, "install").getText().contains("'/usr/bin/kubeadm'"));
    assertTrue(script(plan, "etcd-snapshot").getText().contains("etcdctl"), "kubeadm snapshots with etcdctl");
    assertFalse(plan.getNodes().get(0).getSteps().stream().anyMatch(s -> s.getAction().contains("etcd voter")));
  }

  @Test
  void aKubeadmWorkersPlanRunsKubeadmUpgradeNodeInWaves() throws Exception {
    UpgradePlan plan = DryRunPlanner.plan(kubeadm(List.of("md-a")), false, 0L);

    assertEquals(List.of("w-0", "w-1"), plan.getNodes().stream().map(PlannedNode::getNode).toList());
    assertEquals(List.of(1, 2), plan.getNodes().stream().map(PlannedNode::getWave).toList());
    assertTrue(steps(plan.getNodes().get(0)).contains("upgrade"));
    assertTrue(script(plan, "upgrade-worker").getText().contains("mode='node'"));
    assertTrue(script(plan, "restart-agent").getText().contains("service='kubelet'"));
  }
}
