package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.worker;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.NodeRole;
import java.util.List;
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
}
