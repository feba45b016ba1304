package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.truth.EstateReport;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** The campaign's pause invariant, read from the estate's report (docs/reliability.md, Invariants). */
class GroundTruthCheckTest {
  private static final String RUN = "cp-upgrade/fleet/edge-1-control-plane/1";

  private static GroundTruthCheck check(boolean controlPlanePaused, String pausedBy, boolean clusterPaused,
      boolean controlPlaneFails) {
    GroundTruthCheck check = new GroundTruthCheck(null, "v1.30.6+k3s1", "v1.31.2+k3s1", Set.of());
    EstateReport report = new EstateReport(List.of(), List.of(new EstateReport.ClusterReport("fleet", "edge-1",
        clusterPaused, "KThreesControlPlane", "edge-1-control-plane", "v1.31.2+k3s1", controlPlanePaused, pausedBy)), null);
    check.report(report, Set.of(), controlPlaneFails);
    return check;
  }

  @Test
  void anUnpausedEstateHoldsTheInvariant() {
    GroundTruthCheck check = check(false, "", false, false);
    assertEquals(List.of(), check.violations());
    assertEquals(0, check.marksLeft);
  }

  @Test
  void aControlPlaneLeftPausedIsAViolationWhenNoControlPlaneWasMadeToFail() {
    GroundTruthCheck check = check(true, RUN, false, false);
    assertEquals(1, check.marksLeft);
    assertTrue(check.violations().get(0).contains("left paused (by " + RUN + ")"), check.violations().toString());
  }

  @Test
  void mixedVersionsKeepThePauseOnlyAsARunsOwnPause() {
    assertEquals(List.of(), check(true, RUN, false, true).violations(), "the run's documented pause");
    GroundTruthCheck nobody = check(true, "", false, true);
    assertEquals(1, nobody.marksLeft);
    assertTrue(nobody.violations().get(0).contains("left paused (by no run)"), nobody.violations().toString());
  }

  @Test
  void aPausedClusterIsAViolation() {
    GroundTruthCheck check = check(false, "", true, true);
    assertEquals(1, check.marksLeft);
    assertTrue(check.violations().get(0).contains("Cluster fleet/edge-1 left paused"), check.violations().toString());
  }
}
