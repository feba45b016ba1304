package dev.inplace.worker.watch;

import static dev.inplace.worker.watch.WatcherHarness.condition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.PlannedNode;
import dev.inplace.worker.crd.PlannedScript;
import dev.inplace.worker.crd.PlannedStep;
import dev.inplace.worker.crd.SshSpec;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradePlan;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@EnableKubernetesMockClient(crud = true, https = false)
@Timeout(120)
class DryRunTest {
  KubernetesClient client;
  private WatcherHarness h;

  @BeforeEach
  void setUp() {
    h = new WatcherHarness(client);
    h.watcher(WatcherHarness.fast());
  }

  @AfterEach
  void tearDown() {
    h.close();
  }

  private static PlannedScript script(UpgradePlan plan, String name) {
    return plan.getScripts().stream().filter(s -> s.getName().equals(name)).findFirst().orElseThrow(() ->
        new AssertionError("no script " + name + " in " + plan.getScripts().stream().map(PlannedScript::getName).toList()));
  }

  @Test
  void aControlPlaneDryRunPlansEveryNodeWithItsRemoteCommandsAndChangesNothing() throws Exception {
    ControlPlaneUpgrade cr = h.create(TestEstate.controlPlaneUpgrade("plan", TestEstate.spec(new ControlPlaneUpgradeSpec())
        .setDryRun(true)
        .setSsh(new SshSpec().setUser("ops").setPrivateKeySecret(TestEstate.SSH_KEY).setKnownHostsSecret(TestEstate.KNOWN_HOSTS))));

    UpgradeStatus planned = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.PLANNED);
    UpgradePlan plan = planned.getPlan();
    assertEquals(List.of("cp-0", "cp-1"), plan.getNodes().stream().map(PlannedNode::getNode).toList());
    assertEquals(List.of(1, 2), plan.getNodes().stream().map(PlannedNode::getWave).toList(), "one at a time");
    List<String> steps = plan.getNodes().get(0).getSteps().stream().map(PlannedStep::getStep).toList();
    assertEquals(List.of("snapshot", "preflight", "stage", "stage", "backup", "cordon", "drain", "install", "restart",
        "verify", "uncordon", "record", "restore", "release"), steps);
    assertFalse(plan.getNodes().get(1).getSteps().stream().anyMatch(s -> s.getStep().equals("snapshot")));

    PlannedScript install = script(plan, "install");
    assertEquals("sudo -n bash -s", install.getCommand(), "a non-root user runs scripts under sudo");
    assertTrue(install.getText().startsWith("#!/bin/bash\n# inplace-step: install\nset -eu\n"));
    assertTrue(install.getText().contains("install_artifact 'k3s' 'k3s." + "ab".repeat(32) + "' '" + "ab".repeat(32)
        + "' '/usr/local/bin/k3s' '0755'"), install.getText());
    assertTrue(script(plan, "restart-server").getText().contains("service='k3s'"));
    assertTrue(script(plan, "etcd-snapshot").getText().contains("name='inplace-pre-v1-31-2-k3s1'"));
    assertTrue(script(plan, "backup").getText().contains("backup_file '/usr/local/bin/k3s' '<sha256 read at preflight>'"));
    assertTrue(plan.getSummary().contains("2 to upgrade"), plan.getSummary());
    assertTrue(condition(UpgradeCondition.PROGRESSING, false, Reasons.PLANNED).test(planned));

    Thread.sleep(1000);
    assertEquals(List.of(), h.starts);
    assertFalse(h.controlPlane("plan").getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER));
    assertNull(h.controlPlane("plan").getStatus().getWorkflowIds());
  }

  @Test
  void aWorkersDryRunOrdersEachPoolInWavesAndTurningDryRunOffStartsTheRuns() {
    FakeControlPlaneUpgrade.NODES.forEach(n -> h.estate.setKubelet(n, TestEstate.TO));
    h.estate.setKubelet("md-b-1", TestEstate.TO);
    WorkersUpgrade cr = h.create(TestEstate.workersUpgrade("plan", TestEstate.spec(new WorkersUpgradeSpec())
        .setMaxUnavailable(new IntOrString(1))
        .setDryRun(true)));

    UpgradePlan plan = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.PLANNED).getPlan();
    assertEquals(List.of("md-a-0", "md-a-1", "md-b-0", "md-b-1"), plan.getNodes().stream().map(PlannedNode::getNode).toList());
    assertEquals(List.of(1, 2, 1), plan.getNodes().subList(0, 3).stream().map(PlannedNode::getWave).toList());
    assertEquals("Upgrade", plan.getNodes().get(0).getAction());
    assertEquals(TestEstate.FROM, plan.getNodes().get(0).getCurrentVersion());
    assertTrue(script(plan, "restart-agent").getText().contains("service='k3s-agent'"));
    assertEquals("bash -s", script(plan, "install").getCommand());
    assertEquals(List.of(), h.starts);

    h.kube.resources(WorkersUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName("plan")
        .edit(c -> { c.getSpec().setDryRun(false); return c; });
    UpgradeStatus started = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.RUNNING);
    assertNull(started.getPlan());
    assertEquals(2, h.starts.size());
  }
}
