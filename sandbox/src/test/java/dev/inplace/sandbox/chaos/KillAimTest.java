package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.chaos.ActivityWatch.InFlight;
import java.util.EnumSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Which activity an aimed kill takes (docs/reliability.md, "Kills"). */
class KillAimTest {
  private static final String CP = "cp-upgrade/fleet/edge-1-control-plane/1";
  private static final String NODE = "node-upgrade/fleet/edge-1-worker-b-1/v1.31.2+k3s1";
  private static final InFlight DESCRIBE = new InFlight(CP, "DescribeCluster", 11, 1, false, 0);
  private static final InFlight INSPECT = new InFlight(CP, "InspectHost", 12, 1, false, 0);
  private static final InFlight MARK = new InFlight(CP, "MarkMachineUpgrading", 12, 1, false, 0);
  private static final InFlight STAGE = new InFlight(NODE, "StageArtifacts", 11, 1, false, 0);
  private static final InFlight DRAIN = new InFlight(NODE, "DrainNode", 12, 1, false, 0);
  private static final Set<KillKind> ALL_BUT_COMPENSATION = EnumSet.of(
      KillKind.UPLOAD, KillKind.INSTALL, KillKind.RESTART, KillKind.DRAIN, KillKind.VERIFY);

  @Test
  void aKindNotHitYetIsTakenOverThePreflightInFlightBesideIt() {
    for (long seed = 0; seed < 20; seed++) {
      assertEquals(Optional.of(STAGE), KillAim.choose(List.of(DESCRIBE, INSPECT, STAGE), ALL_BUT_COMPENSATION, false,
          new Random(seed)));
    }
  }

  @Test
  void aPatientKillWaitsWhileOnlyThePreflightIsInFlight() {
    assertEquals(Optional.empty(), KillAim.choose(List.of(DESCRIBE, INSPECT), ALL_BUT_COMPENSATION, false, new Random(1)));
  }

  @Test
  void onceItsPatienceIsOverAKillTakesANamedKindBeforeThePreflightAndThePreflightBeforeNothing() {
    Set<KillKind> onlyVerifyWanted = EnumSet.of(KillKind.VERIFY);
    for (long seed = 0; seed < 20; seed++) {
      assertEquals(Optional.of(DRAIN), KillAim.choose(List.of(DESCRIBE, DRAIN, MARK), onlyVerifyWanted, true,
          new Random(seed)));
    }
    assertTrue(List.of(DESCRIBE, MARK).contains(
        KillAim.choose(List.of(DESCRIBE, MARK), onlyVerifyWanted, true, new Random(3)).orElseThrow()));
  }

  @Test
  void withEveryNamedKindHitAKillTakesWhatIsInFlightWithoutWaiting() {
    assertEquals(Optional.of(DESCRIBE), KillAim.choose(List.of(DESCRIBE), Set.of(), false, new Random(1)));
  }

  @Test
  void nothingInFlightIsNothingToAimAt() {
    assertEquals(Optional.empty(), KillAim.choose(List.of(), ALL_BUT_COMPENSATION, true, new Random(1)));
  }

  @Test
  void theSameSeedMakesTheSameChoice() {
    List<InFlight> inFlight = List.of(STAGE, DRAIN, DESCRIBE, INSPECT);
    for (long seed = 0; seed < 20; seed++) {
      assertEquals(KillAim.choose(inFlight, ALL_BUT_COMPENSATION, false, new Random(seed)),
          KillAim.choose(inFlight, ALL_BUT_COMPENSATION, false, new Random(seed)));
    }
  }

  @Test
  void everyActivityOfARunRollingBackIsItsCompensation() {
    assertEquals(KillKind.COMPENSATION, new InFlight(NODE, "UncordonNode", 11, 1, true, 0).kind());
    assertEquals(KillKind.COMPENSATION, new InFlight(NODE, "RestartService", 11, 1, true, 0).kind());
    assertEquals(KillKind.COMPENSATION, new InFlight(NODE, "RestoreBinaries", 11, 1, false, 0).kind());
    assertEquals(KillKind.RESTART, new InFlight(NODE, "RestartService", 11, 1, false, 0).kind());
    assertEquals(KillKind.BOOKKEEPING, new InFlight(NODE, "UncordonNode", 11, 1, false, 0).kind());
  }

  @Test
  void theIssuesStepsAreTheNamedKinds() {
    assertEquals(KillKind.UPLOAD, STAGE.kind());
    assertEquals(KillKind.INSTALL, new InFlight(NODE, "InstallArtifacts", 11, 1, false, 0).kind());
    assertEquals(KillKind.DRAIN, DRAIN.kind());
    assertEquals(KillKind.VERIFY, new InFlight(NODE, "AwaitNodeVersion", 11, 1, false, 0).kind());
    assertEquals(KillKind.PREFLIGHT, DESCRIBE.kind());
    assertTrue(KillKind.NAMED.stream().allMatch(KillKind::named));
    assertTrue(!KillKind.PREFLIGHT.named() && !KillKind.BOOKKEEPING.named());
  }
}
