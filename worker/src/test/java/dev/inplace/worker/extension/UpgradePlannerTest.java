package dev.inplace.worker.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class UpgradePlannerTest {
  static final List<String> CLASS = List.of("v1.30.6", "v1.30.7", "v1.31.2", "v1.31.4", "v1.32.3", "v1.33.1");

  @Test
  void aPatchUpgradeIsOneStepForTheControlPlaneAndForTheWorkers() {
    UpgradePlanner.Plan plan = UpgradePlanner.plan("v1.30.6", "v1.30.6", "v1.30.7", CLASS, "fleet/c");
    assertEquals(List.of("v1.30.7"), plan.controlPlane());
    assertEquals(List.of("v1.30.7"), plan.workers());
  }

  @Test
  void twoMinorsStepTheControlPlaneAndTheWorkersThroughTheLatestListedVersionOfTheMinorBetween() {
    UpgradePlanner.Plan plan = UpgradePlanner.plan("v1.30.6", "v1.30.6", "v1.32.3", CLASS, "fleet/c");
    assertEquals(List.of("v1.31.4", "v1.32.3"), plan.controlPlane());
    // CAPI alone would move the workers v1.30 -> v1.32 in one step, a minor inplace declines.
    assertEquals(List.of("v1.31.4", "v1.32.3"), plan.workers());
  }

  @Test
  void workersBehindTheControlPlaneStepThroughItsCurrentVersionFirst() {
    UpgradePlanner.Plan plan = UpgradePlanner.plan("v1.31.2", "v1.30.6", "v1.33.1", CLASS, "fleet/c");
    assertEquals(List.of("v1.32.3", "v1.33.1"), plan.controlPlane());
    assertEquals(List.of("v1.31.2", "v1.32.3", "v1.33.1"), plan.workers());
  }

  @Test
  void partsAlreadyAtTheTargetHaveNoSteps() {
    UpgradePlanner.Plan workersBehind = UpgradePlanner.plan("v1.31.4", "v1.30.6", "v1.31.4", CLASS, "fleet/c");
    assertEquals(List.of(), workersBehind.controlPlane());
    assertEquals(List.of("v1.31.4"), workersBehind.workers());
    UpgradePlanner.Plan noWorkers = UpgradePlanner.plan("v1.30.6", "", "v1.31.4", CLASS, "fleet/c");
    assertEquals(List.of("v1.31.4"), noWorkers.controlPlane());
    assertEquals(List.of(), noWorkers.workers());
  }

  @Test
  void aMinorTheClassDoesNotListIsRefusedNamingTheClassAndTheFix() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> UpgradePlanner.plan("v1.30.6", "v1.30.6", "v1.32.3", List.of("v1.30.6", "v1.32.3"), "fleet/c"));
    assertTrue(e.getMessage().contains("ClusterClass fleet/c lists no v1.31 version; add one to its spec.kubernetesVersions"),
        e.getMessage());
    assertThrows(IllegalArgumentException.class, () -> UpgradePlanner.plan("v1.30.6", "v1.30.6", "v1.32.3", List.of(), "fleet/c"));
  }

  @Test
  void aDowngradeOrAnUnparseableVersionIsRefused() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> UpgradePlanner.plan("v1.31.2", "v1.31.2", "v1.30.7", CLASS, "fleet/c"))
        .getMessage().contains("never downgrades"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> UpgradePlanner.plan("v1.30.6", "v1.30.6", "latest", CLASS, "fleet/c"))
        .getMessage().contains("toKubernetesVersion 'latest' is not a Kubernetes version"));
  }

  @Test
  void theClassVersionsKeepTheirSpellingInThePlan() {
    UpgradePlanner.Plan plan = UpgradePlanner.plan("v1.30.6", "v1.30.6", "v1.32.3", List.of("1.31.4", "v1.32.3"), "fleet/c");
    assertEquals(List.of("1.31.4", "v1.32.3"), plan.controlPlane());
    assertEquals(List.of("1.31.4", "v1.32.3"), plan.workers());
  }
}
