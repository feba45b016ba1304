package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.OTHER_POOL;
import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.concat;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlane;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PlanActivities.PlanSlot;
import dev.inplace.workflows.api.PlanActivities.RenderedSteps;
import dev.inplace.workflows.api.PlanWorkflow.PlanRequest;
import dev.inplace.workflows.api.PlanWorkflow.PlanScope;
import dev.inplace.workflows.api.UpgradePlan;
import dev.inplace.workflows.api.UpgradePlan.Finding;
import dev.inplace.workflows.api.UpgradePlan.Severity;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.ParentFixtures;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class UpgradePlannerTest {
  private static final long MONDAY_NOON = Instant.parse("2026-11-23T12:00:00Z").toEpochMilli();

  private static PlanRequest request(PlanScope scope, String maxUnavailable, MaintenanceWindow window) {
    return new PlanRequest(Fixtures.CLUSTER, ParentFixtures.template(), scope, List.of(), maxUnavailable, window, true);
  }

  private static NodeUpgradeTemplate kubeadm() {
    NodeUpgradeTemplate k3s = ParentFixtures.template();
    return new NodeUpgradeTemplate(Distribution.KUBEADM, Fixtures.KUBEADM_TO, Fixtures.kubeadmArtifacts(),
        HostProfile.kubeadmDefaults(), k3s.ssh(), k3s.drain(), 60, 0, "amd64");
  }

  private static List<Finding> of(List<Finding> findings, Severity severity) {
    return findings.stream().filter(f -> f.severity() == severity).toList();
  }

  @Test
  void controlPlanesGoOnePerWaveThenEachPoolInWindowsOfMaxUnavailable() {
    ClusterInventory inv = inventory(concat(controlPlanes(3, FROM), concat(workers(POOL, 5, FROM), workers(OTHER_POOL, 2, FROM))));
    List<PlanSlot> slots = UpgradePlanner.slots(request(PlanScope.CLUSTER, "2", null), inv, Map.of());
    assertEquals(List.of("cp-1", "cp-2", "cp-3", "worker-a-1", "worker-a-2", "worker-a-3", "worker-a-4", "worker-a-5",
        "worker-b-1", "worker-b-2"), slots.stream().map(s -> s.machine().nodeName()).toList());
    assertEquals(List.of(1, 2, 3, 4, 4, 5, 5, 6, 4, 4), slots.stream().map(PlanSlot::wave).toList());
    assertEquals("inplace-pre-v1-31-2-k3s1", slots.get(0).snapshotName());
    assertEquals("cp-1", slots.get(0).snapshotNode());
    assertTrue(slots.stream().skip(1).allMatch(s -> s.snapshotName() == null));
    assertFalse(slots.get(0).firstControlPlane(), "k3s has no upgrade command to apply");
  }

  @Test
  void aPercentWindowRoundsUpAsTheRunDoes() {
    ClusterInventory inv = inventory(concat(controlPlanes(1, TO), workers(POOL, 5, FROM)));
    List<PlanSlot> slots = UpgradePlanner.slots(request(PlanScope.WORKERS, "25%", null), inv, Map.of()).stream()
        .filter(s -> POOL.equals(s.group())).toList();
    // 25% of 5 rounds up to 2, as WorkersUpgrade's MaxUnavailable does.
    assertEquals(RunOrder.window("25%", 5), 2);
    assertEquals(List.of(1, 1, 2, 2, 3), slots.stream().map(PlanSlot::wave).toList());
  }

  @Test
  void nodesAtTargetAreListedWithoutAWaveAndTheSnapshotIsSkippedWhenEveryControlPlaneRunsTheTarget() {
    ClusterInventory inv = inventory(concat(controlPlanes(2, TO), concat(List.of(ParentFixtures.worker(POOL, 1, TO)),
        List.of(ParentFixtures.worker(POOL, 2, FROM)))));
    List<PlanSlot> slots = UpgradePlanner.slots(request(PlanScope.CLUSTER, "1", null), inv, Map.of());
    assertEquals(List.of(0, 0, 0, 1), slots.stream().map(PlanSlot::wave).toList());
    assertTrue(slots.stream().allMatch(s -> s.snapshotName() == null));
    assertEquals(List.of(false, false, false, true), slots.stream().map(PlanSlot::upgrade).toList());
  }

  @Test
  void kubeadmAppliesOnTheFirstControlPlaneNotYetAtTheTarget() {
    List<MachineInfo> cps = List.of(
        new MachineInfo("edge-1-cp-1", "cp-1", dev.inplace.workflows.api.NodeRole.CONTROL_PLANE, "10.0.0.1",
            Fixtures.KUBEADM_FROM, Fixtures.KUBEADM_FROM, ""),
        new MachineInfo("edge-1-cp-2", "cp-2", dev.inplace.workflows.api.NodeRole.CONTROL_PLANE, "10.0.0.2",
            Fixtures.KUBEADM_FROM, Fixtures.KUBEADM_FROM, ""));
    PlanRequest req = new PlanRequest(Fixtures.CLUSTER, kubeadm(), PlanScope.CONTROL_PLANE, List.of(), "1", null, false);
    List<PlanSlot> slots = UpgradePlanner.slots(req, inventory(cps), Map.of());
    assertEquals(List.of(true, false), slots.stream().map(PlanSlot::firstControlPlane).toList());
    // A control plane whose kubelet already reports the target means apply already ran.
    List<PlanSlot> after = UpgradePlanner.slots(req, inventory(cps), Map.of("cp-1", Fixtures.KUBEADM_TO));
    assertEquals(List.of(false, false), after.stream().map(PlanSlot::firstControlPlane).toList());
  }

  @Test
  void findingsNameSkewDiskArchNotReadyBlockingBudgetsAndTheNextWindowOpening() {
    ClusterInventory inv = inventory(concat(controlPlanes(3, FROM), workers(POOL, 1, FROM)));
    MaintenanceWindow window = new MaintenanceWindow(List.of("SAT"), "22:00", "04:00", "UTC");
    PlanRequest req = request(PlanScope.CLUSTER, "1", window);
    List<PlanSlot> slots = UpgradePlanner.slots(req, inv, Map.of());
    NodesState nodes = new NodesState(List.of(
        Fixtures.readyAt("cp-1", FROM), Fixtures.readyAt("cp-2", FROM), new NodeState("cp-3", false, false, FROM, null),
        Fixtures.readyAt("worker-a-1", FROM)), List.of());
    HostFacts arm = new HostFacts("arm64", 10L << 30, List.of(new InstalledFile("/usr/local/bin/k3s", Fixtures.OLD_SHA)), FROM, true);
    HostFacts full = new HostFacts("amd64", 1024, List.of(new InstalledFile("/usr/local/bin/k3s", Fixtures.OLD_SHA)), FROM, true);
    var seen = new UpgradePlanner.Observations(nodes, null, true,
        Map.of("cp-1", Fixtures.hostWithOldRelease(), "cp-2", arm, "worker-a-1", full),
        Map.of(), new BudgetReport(List.of(new BlockingBudget("apps", "db", 0, 3))), null);
    List<Finding> findings = UpgradePlanner.findings(req, inv, slots, seen, MONDAY_NOON);
    List<String> errors = of(findings, Severity.ERROR).stream().map(f -> f.reason() + "@" + f.node()).toList();
    assertEquals(List.of(UpgradeFailures.ARCHITECTURE_MISMATCH + "@cp-2", UpgradeFailures.NODE_NOT_READY + "@cp-3",
        UpgradeFailures.INSUFFICIENT_DISK + "@worker-a-1"), errors);
    Finding budget = of(findings, Severity.WARNING).get(0);
    assertEquals(UpgradeFailures.DRAIN_BLOCKED, budget.reason());
    assertTrue(budget.message().contains("apps/db allows 0 disruption(s)"), budget.message());
    Finding opens = findings.stream().filter(f -> f.reason().equals(UpgradePlanner.MAINTENANCE_WINDOW)).findFirst().orElseThrow();
    assertTrue(opens.message().contains("2026-11-28T22:00:00Z"), opens.message());
    assertEquals("2026-11-28T22:00:00Z", UpgradePlanner.windowOpensAt(window, MONDAY_NOON));
    assertTrue(findings.stream().anyMatch(f -> f.reason().equals("HostInspected") && "cp-1".equals(f.node())));
  }

  @Test
  void aSkipOfTwoMinorsIsAVersionSkewErrorAsTheRunRefusesIt() {
    ClusterInventory inv = inventory(controlPlanes(1, "v1.29.3+k3s1"));
    PlanRequest req = request(PlanScope.CONTROL_PLANE, "1", null);
    List<Finding> findings = UpgradePlanner.findings(req, inv, UpgradePlanner.slots(req, inv, Map.of()),
        UpgradePlanner.Observations.inventoryOnly(), MONDAY_NOON);
    assertEquals(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, of(findings, Severity.ERROR).get(0).reason());
    assertTrue(findings.stream().anyMatch(f -> f.reason().equals(UpgradePlanner.HOSTS_NOT_INSPECTED)));
  }

  @Test
  void workersAloneWhileTheControlPlaneIsBehindIsRefusedButNotInAWholeClusterPlan() {
    ClusterInventory inv = inventory(concat(List.of(controlPlane(1, FROM)), workers(POOL, 1, FROM)));
    PlanRequest workers = request(PlanScope.WORKERS, "1", null);
    PlanRequest cluster = request(PlanScope.CLUSTER, "1", null);
    assertTrue(UpgradePlanner.findings(workers, inv, UpgradePlanner.slots(workers, inv, Map.of()),
        UpgradePlanner.Observations.inventoryOnly(), MONDAY_NOON).stream()
        .anyMatch(f -> f.severity() == Severity.ERROR && f.message().contains("upgrade the control plane first")));
    assertTrue(of(UpgradePlanner.findings(cluster, inv, UpgradePlanner.slots(cluster, inv, Map.of()),
        UpgradePlanner.Observations.inventoryOnly(), MONDAY_NOON), Severity.ERROR).isEmpty());
  }

  @Test
  void anUnknownMachineDeploymentIsAnErrorAndPlansNoNodes() {
    ClusterInventory inv = inventory(concat(controlPlanes(1, TO), workers(POOL, 2, FROM)));
    PlanRequest req = new PlanRequest(Fixtures.CLUSTER, ParentFixtures.template(), PlanScope.WORKERS, List.of("nope"),
        "1", null, false);
    List<PlanSlot> slots = UpgradePlanner.slots(req, inv, Map.of());
    assertTrue(slots.isEmpty());
    Finding error = of(UpgradePlanner.findings(req, inv, slots, UpgradePlanner.Observations.inventoryOnly(), 0), Severity.ERROR).get(0);
    assertTrue(error.message().contains("MachineDeployment nope not found"), error.message());
  }

  @Test
  void assembleGroupsWavesAndAttachesEachNodesSteps() {
    ClusterInventory inv = inventory(concat(controlPlanes(2, FROM), workers(POOL, 2, FROM)));
    PlanRequest req = request(PlanScope.CLUSTER, "2", null);
    List<PlanSlot> slots = UpgradePlanner.slots(req, inv, Map.of());
    List<List<UpgradePlan.Step>> steps = slots.stream()
        .map(s -> List.of(new UpgradePlan.Step("install", "install on " + s.machine().nodeName(), "install", false)))
        .toList();
    UpgradePlan plan = UpgradePlanner.assemble(req, slots, new RenderedSteps(steps, List.of()), List.of(), true, 0);
    assertEquals(List.of(new UpgradePlan.Wave(1, "control-plane", List.of("cp-1")),
        new UpgradePlan.Wave(2, "control-plane", List.of("cp-2")),
        new UpgradePlan.Wave(3, POOL, List.of("worker-a-1", "worker-a-2"))), plan.waves());
    assertEquals("install on worker-a-2", plan.nodes().get(3).steps().get(0).description());
    assertTrue(plan.summary().contains("4 to upgrade, 0 already at target, in 3 wave(s)"), plan.summary());
    assertFalse(plan.refused());
  }
}
