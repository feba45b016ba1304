package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.chaos.ActivityWatch.InFlight;
import dev.inplace.sandbox.chaos.KillReport.JournalEvidence;
import dev.inplace.sandbox.truth.HostJournal;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How a kill is attributed from the hosts' journals (docs/reliability.md, "Attributing a kill"). */
class KillAttributionTest {
  private static final String WF = "node-upgrade/fleet/edge-1-worker-b-1/v1.31.2+k3s1";
  private static final long T0 = 1_795_743_600_000L;
  private static final long PID = 4242;

  /** One journal line at {@code T0 + millis}. */
  private static String line(long millis, long bashPid, String script, int attempt, String event) {
    long at = T0 + millis;
    return String.format("ts=%d.%03d000 pid=%d script=%s wf=%s run=r1 attempt=%d event=%s", at / 1000, at % 1000, bashPid,
        script, WF, attempt, event);
  }

  private static HostJournal journal(String... lines) {
    return HostJournal.parse("worker-b-1", List.of(lines));
  }

  private static InFlight attempt(String activity, int attempt, long startedMillis, boolean rollingBack) {
    return new InFlight(WF, activity, PID, attempt, rollingBack, startedMillis == 0 ? 0 : T0 + startedMillis);
  }

  /** A restore cut by a kill at T0+1000 (no end line), then its repeat by attempt 2, which acted again. */
  private static HostJournal cutRestore() {
    return journal(
        line(900, 100, "restore", 1, "begin"),
        line(950, 100, "restore", 1, "act action=restore path=/usr/local/bin/k3s from=aaa to=bbb"),
        line(16_000, 200, "restore", 2, "begin"),
        line(16_010, 200, "restore", 2, "act action=restore path=/usr/local/bin/k3s from=aaa to=bbb"),
        line(16_100, 200, "restore", 2, "end exit=0"));
  }

  @Test
  void aScriptOfTheKilledAttemptThatBeganAndNeverEndedIsTheEvidenceWithItsRepeat() {
    List<JournalEvidence> found = KillAttribution.evidence(T0 + 1000,
        List.of(attempt("RestoreBinaries", 1, 800, true)), List.of(cutRestore()));
    assertEquals(1, found.size(), found.toString());
    JournalEvidence e = found.get(0);
    assertEquals("worker-b-1", e.host());
    assertEquals("restore", e.script());
    assertEquals(1, e.line());
    assertEquals(-100, e.beganAfterKillMillis());
    assertEquals("none", e.end());
    assertEquals(3, e.repeat().line());
    assertEquals(2, e.repeat().attempt());
    assertEquals("exit=0", e.repeat().end());
    assertEquals(List.of("restore path=/usr/local/bin/k3s from=aaa to=bbb"), e.repeat().acts());
    assertTrue(KillAttribution.inCompensation(found));
  }

  @Test
  void aScriptThatEndedBeforeTheKillOrBeganLongAfterItIsNoEvidence() {
    HostJournal journal = journal(
        line(100, 100, "install", 1, "begin"),
        line(300, 100, "install", 1, "end exit=0"),
        line(6_500, 200, "install", 2, "begin"));
    assertEquals(List.of(), KillAttribution.evidence(T0 + 1000,
        List.of(attempt("InstallArtifacts", 1, 50, false)), List.of(journal)), "ended at +300, before the kill");
    assertEquals(List.of(), KillAttribution.evidence(T0 + 1000,
        List.of(attempt("InstallArtifacts", 2, 50, false)), List.of(journal)), "began 5.5 s after the kill");
  }

  @Test
  void aScriptOfTheKilledAttemptBegunJustAfterTheKillWasSentBeforeItAndCounts() {
    // Seen: the worker was killed while its restart script was on its way; the script began 38 ms later,
    // restarted the service and ended with exit 0, its answer lost. The retry observed the restart done.
    HostJournal journal = journal(
        line(1_038, 100, "restart", 1, "begin"),
        line(1_050, 100, "restart", 1, "act action=restart service=k3s"),
        line(1_150, 100, "restart", 1, "end exit=0"),
        line(19_000, 200, "restart", 2, "begin"),
        line(19_100, 200, "restart", 2, "end exit=0"));
    List<JournalEvidence> found = KillAttribution.evidence(T0 + 1000,
        List.of(attempt("RestartService", 1, 900, false)), List.of(journal));
    assertEquals(1, found.size(), found.toString());
    assertEquals(38, found.get(0).beganAfterKillMillis());
    assertEquals("exit=0", found.get(0).end());
    assertEquals(List.of(), found.get(0).repeat().acts(), "the repeat acted on nothing");
  }

  @Test
  void anEndBySignalOrAnEndWrittenAfterTheKillInstantStillShowsTheScriptRunningAtIt() {
    HostJournal journal = journal(
        line(100, 100, "restart", 1, "begin"),
        line(1_003, 100, "restart", 1, "end signal=HUP"),
        line(200, 300, "stage-commit", 1, "begin"),
        line(1_001, 300, "stage-commit", 1, "end exit=0"));
    List<JournalEvidence> found = KillAttribution.evidence(T0 + 1000,
        List.of(attempt("RestartService", 1, 50, false), attempt("StageArtifacts", 1, 50, false)), List.of(journal));
    assertEquals(List.of("signal=HUP", "exit=0"), found.stream().map(JournalEvidence::end).toList());
    assertEquals(List.of(-900L, -800L), found.stream().map(JournalEvidence::beganAfterKillMillis).toList());
    assertNull(found.get(0).repeat(), "no later attempt of that script in this journal");
    assertFalse(KillAttribution.inCompensation(found));
  }

  @Test
  void anotherActivitysScriptCutEarlierInARunWithTheSameAttemptNumberIsNotTheKillsEvidence() {
    // stage-prepare attempt 1 was cut by a dropped connection long before; InstallArtifacts attempt 1 is killed.
    HostJournal journal = journal(
        line(-60_000, 100, "stage-prepare", 1, "begin"),
        line(-59_000, 150, "stage-prepare", 2, "begin"),
        line(-58_900, 150, "stage-prepare", 2, "end exit=0"),
        line(900, 200, "install", 1, "begin"));
    List<JournalEvidence> found = KillAttribution.evidence(T0 + 1000,
        List.of(attempt("InstallArtifacts", 1, 800, false)), List.of(journal));
    assertEquals(List.of("install"), found.stream().map(JournalEvidence::script).toList());
  }

  @Test
  void aScriptThatBeganBeforeTheAttemptStartedBelongsToAnEarlierAttemptOfTheSameStep() {
    // The forward restart's attempt 1 was cut by a drop; the rollback's restart, attempt 1 too, is killed later.
    HostJournal journal = journal(
        line(-30_000, 100, "restart", 1, "begin"),
        line(-29_000, 150, "restart", 2, "begin"),
        line(-28_900, 150, "restart", 2, "end exit=0"));
    assertEquals(List.of(), KillAttribution.evidence(T0 + 1000,
        List.of(attempt("RestartService", 1, 500, true)), List.of(journal)));
  }

  @Test
  void drainAndTheWaitsOfVerifyRunNoScriptSoTheyHaveNoJournalEvidence() {
    HostJournal journal = journal(line(900, 100, "install", 1, "begin"));
    assertEquals(List.of(), KillAttribution.evidence(T0 + 1000,
        List.of(attempt("DrainNode", 1, 500, false), attempt("AwaitNodeVersion", 1, 500, false)), List.of(journal)));
  }

  @Test
  void aKillCountsMidActivityAndInACompensationWhenEitherTheServerOrTheJournalSaysSo() {
    InFlight restore = attempt("RestoreBinaries", 1, 800, true);
    // The server's describe after the kill listed nothing (lost), but the aimed restore was cut mid-script.
    WorkerKiller.Kill journalOnly = new WorkerKiller.Kill(1, PID, T0 + 1000, WorkerKiller.Restart.AT_ONCE,
        WorkerKiller.Aim.COMPENSATION, restore, List.of());
    KillReport byJournal = KillAttribution.report(1, journalOnly, T0 - 41_000, List.of(cutRestore()));
    assertTrue(byJournal.midActivity());
    assertTrue(byJournal.inCompensation());
    assertEquals(List.of(), byJournal.activities());
    assertEquals(42.0, byJournal.atSeconds());
    assertEquals("compensation", byJournal.aim());

    // The server's word alone: an uncordon of a run rolling back, which runs no script.
    InFlight uncordon = attempt("UncordonNode", 1, 800, true);
    KillReport byServer = KillAttribution.report(2, new WorkerKiller.Kill(2, PID, T0 + 1000, WorkerKiller.Restart.DELAYED,
        WorkerKiller.Aim.IN_FLIGHT, uncordon, List.of(uncordon)), T0, List.of(cutRestore()));
    assertTrue(byServer.midActivity());
    assertTrue(byServer.inCompensation());
    assertEquals(List.of(), byServer.journal());
    assertEquals("compensation", byServer.activities().get(0).kind());

    // Neither: an idle kill.
    KillReport idle = KillAttribution.report(3, new WorkerKiller.Kill(1, PID, T0 + 1000, WorkerKiller.Restart.ALL_DOWN,
        WorkerKiller.Aim.UNAIMED, null, List.of()), T0, List.of(cutRestore()));
    assertFalse(idle.midActivity());
    assertFalse(idle.inCompensation());
    assertEquals("all_down", idle.restart());
    assertEquals("unaimed", idle.aim());
  }

  @Test
  void theLatestRunOfTheAimedAttemptIsTheOneTheCompensationKillWatches() {
    List<String> lines = new ArrayList<>(List.of(line(-5_000, 90, "restore", 1, "begin"), line(-4_000, 91, "restore", 2, "begin"),
        line(-3_900, 91, "restore", 2, "end exit=0")));
    InFlight second = attempt("RestoreBinaries", 2, -4_500, true);
    assertTrue(CompensationKill.scriptOf(journal(lines.toArray(String[]::new)), second).orElseThrow().succeeded());
    assertTrue(CompensationKill.scriptOf(journal(line(0, 1, "install", 2, "begin")), second).isEmpty());
  }
}
