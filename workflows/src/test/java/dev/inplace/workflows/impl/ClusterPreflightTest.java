package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ClusterPreflightTest {

  @Test
  void aMachineAtTheTargetOrOneMinorBehindIsFine() {
    assertEquals(Optional.empty(), ClusterPreflight.versionSkew(List.of(worker("w", 1, FROM), worker("w", 2, TO)), TO));
  }

  @Test
  void namesEveryDowngradeAndMinorSkip() {
    String why =
        ClusterPreflight.versionSkew(
                List.of(worker("w", 1, "v1.31.5+k3s1"), worker("w", 2, FROM), worker("w", 3, "v1.29.1+k3s1")), TO)
            .orElseThrow();

    assertTrue(why.contains("w-1 runs v1.31.5+k3s1 (a downgrade)"), why);
    assertTrue(why.contains("w-3 runs v1.29.1+k3s1 (2 minors behind)"), why);
    assertTrue(!why.contains("w-2"), why);
  }

  @Test
  void aLaterK3sBuildOfTheSamePatchIsADowngrade() {
    assertTrue(ClusterPreflight.versionSkew(List.of(worker("w", 1, "v1.31.2+k3s2")), TO).isPresent());
  }

  @Test
  void theKubeletVersionWinsOverTheMachineVersion() {
    MachineInfo m = new MachineInfo("edge-1-w-1", "w-1", NodeRole.WORKER, "10.0.1.1", FROM, "v1.32.0+k3s1", "w");
    assertTrue(ClusterPreflight.versionSkew(List.of(m), TO).orElseThrow().contains("v1.32.0+k3s1"));
  }

  @Test
  void anUnknownVersionIsLeftToTheNodesOwnPreflight() {
    MachineInfo m = new MachineInfo("edge-1-w-1", "w-1", NodeRole.WORKER, "10.0.1.1", "", "", "w");
    assertEquals(Optional.empty(), ClusterPreflight.versionSkew(List.of(m), TO));
  }

  @Test
  void snapshotNamesKeepOnlyLowerCaseLettersDigitsAndDashes() {
    assertEquals("inplace-pre-v1-31-2-k3s1", ClusterPreflight.snapshotName("v1.31.2+k3s1"));
  }

  @Test
  void blockingBudgetsAreNamed() {
    assertEquals(Optional.empty(), ClusterPreflight.budgetWarning(List.of()));
    String warning =
        ClusterPreflight.budgetWarning(List.of(new BlockingBudget("apps", "web", 0, 2))).orElseThrow();
    assertTrue(warning.contains("apps/web (0 disruptions allowed, 2 pods)"), warning);
  }

  // ---- the k0s-aware rule of parent-k0s-node-version (VersionMatch.AS_REPORTED) ------------------

  private static final String K0S_TO = "v1.31.2+k0s.1";

  /** A k0s Machine whose spec.version is {@code machine} and whose Node reports {@code node}. */
  private static MachineInfo k0s(String name, NodeRole role, String machine, String node) {
    return new MachineInfo("edge-1-" + name, name, role, "10.0.0.1", machine, node, role == NodeRole.WORKER ? "w" : "");
  }

  @Test
  void aK0sControlPlaneReportingPlusK0sIsNotBehindAPlusK0sOneTarget() {
    List<MachineInfo> cps = List.of(k0s("cp-1", NodeRole.CONTROL_PLANE, K0S_TO, "v1.31.2+k0s"));
    assertEquals(Optional.empty(), ClusterPreflight.controlPlaneBehind(cps, K0S_TO, VersionMatch.AS_REPORTED));
    // The exact rule of older runs orders +k0s (build 0) before +k0s.1: refused as behind.
    assertTrue(ClusterPreflight.controlPlaneBehind(cps, K0S_TO, VersionMatch.EXACT).isPresent());
  }

  @Test
  void aK0sControlPlaneOnTheOldMinorIsStillBehind() {
    List<MachineInfo> cps = List.of(
        k0s("cp-1", NodeRole.CONTROL_PLANE, K0S_TO, "v1.31.2+k0s"),
        k0s("cp-2", NodeRole.CONTROL_PLANE, "v1.30.6+k0s.0", "v1.30.6+k0s"));
    String why = ClusterPreflight.controlPlaneBehind(cps, K0S_TO, VersionMatch.AS_REPORTED).orElseThrow();
    assertTrue(why.contains("cp-2 runs v1.30.6+k0s") && !why.contains("cp-1"), why);
  }

  @Test
  void withoutANodeVersionTheMachineVersionMustBeTheTarget() {
    List<MachineInfo> at = List.of(k0s("cp-1", NodeRole.CONTROL_PLANE, K0S_TO, ""));
    List<MachineInfo> before = List.of(k0s("cp-1", NodeRole.CONTROL_PLANE, "v1.31.2+k0s.0", ""));
    assertEquals(Optional.empty(), ClusterPreflight.controlPlaneBehind(at, K0S_TO, VersionMatch.AS_REPORTED));
    assertTrue(ClusterPreflight.controlPlaneBehind(before, K0S_TO, VersionMatch.AS_REPORTED).isPresent());
  }

  @Test
  void k3sControlPlanesAreJudgedAlikeByBothRules() {
    for (VersionMatch match : VersionMatch.values()) {
      assertEquals(Optional.empty(), ClusterPreflight.controlPlaneBehind(List.of(worker("cp", 1, TO)), TO, match));
      assertTrue(ClusterPreflight.controlPlaneBehind(List.of(worker("cp", 1, FROM)), TO, match).isPresent());
      assertTrue(ClusterPreflight.controlPlaneBehind(List.of(worker("cp", 1, "v1.31.2+k3s2")), TO, match).isPresent());
    }
  }

  @Test
  void aK0sMachineIsAtTheTargetOnlyWhenItsMachineRecordsTheBuild() {
    MachineInfo done = k0s("w-1", NodeRole.WORKER, K0S_TO, "v1.31.2+k0s");
    MachineInfo previousBuild = k0s("w-2", NodeRole.WORKER, "v1.31.2+k0s.0", "v1.31.2+k0s");
    assertTrue(ClusterPreflight.atTarget(done, done.kubeletVersion(), K0S_TO, VersionMatch.AS_REPORTED));
    assertFalse(ClusterPreflight.atTarget(previousBuild, previousBuild.kubeletVersion(), K0S_TO, VersionMatch.AS_REPORTED));
    assertFalse(ClusterPreflight.atTarget(done, done.kubeletVersion(), K0S_TO, VersionMatch.EXACT));
    assertTrue(ClusterPreflight.atTarget(worker("w", 1, TO), TO, TO, VersionMatch.AS_REPORTED));
  }

  @Test
  void theEtcdSnapshotIsSkippedOnlyWhenEveryK0sControlPlaneIsDone() {
    MachineInfo done = k0s("cp-1", NodeRole.CONTROL_PLANE, K0S_TO, "v1.31.2+k0s");
    MachineInfo previousBuild = k0s("cp-2", NodeRole.CONTROL_PLANE, "v1.31.2+k0s.0", "v1.31.2+k0s");
    Map<String, String> kubelets = Map.of("cp-1", "v1.31.2+k0s", "cp-2", "v1.31.2+k0s");
    assertFalse(RunOrder.takesEtcdSnapshot(List.of(done), kubelets, K0S_TO, VersionMatch.AS_REPORTED));
    assertTrue(RunOrder.takesEtcdSnapshot(List.of(done, previousBuild), kubelets, K0S_TO, VersionMatch.AS_REPORTED));
    // The exact rule never saw a k0s kubelet at a +k0s.N target: always a snapshot.
    assertTrue(RunOrder.takesEtcdSnapshot(List.of(done), kubelets, K0S_TO, VersionMatch.EXACT));
  }
}
