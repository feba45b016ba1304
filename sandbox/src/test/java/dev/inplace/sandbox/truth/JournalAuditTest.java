package dev.inplace.sandbox.truth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class JournalAuditTest {
  private static final String OLD = "a".repeat(64);
  private static final String NEW = "b".repeat(64);

  private static String line(long pid, String script, int attempt, String event) {
    return "ts=1795478745.259072 pid=" + pid + " script=" + script
        + " wf=node-upgrade-edge-1-w0 run=6f1c attempt=" + attempt + " event=" + event;
  }

  private static List<JournalAudit.Violation> audit(String... lines) {
    return JournalAudit.audit(HostJournal.parse("w-0", List.of(lines)));
  }

  @Test
  void aSwapRetriedAfterTheFirstWasCutOffIsSafe() {
    assertEquals(
        List.of(),
        audit(
            line(10, "install", 1, "begin"),
            line(10, "install", 1, "act action=swap path=/usr/local/bin/k3s from=" + OLD + " to=" + NEW),
            // no end: the connection dropped, the script was killed
            line(11, "install", 2, "begin"),
            line(11, "install", 2, "act action=swap path=/usr/local/bin/k3s from=" + OLD + " to=" + NEW),
            line(11, "install", 2, "end exit=0")));
  }

  @Test
  void aSwapRepeatedAfterASwapThatCompletedIsSafeOnlyWhenTheScriptSawTheOldFile() {
    List<JournalAudit.Violation> violations =
        audit(
            line(10, "install", 1, "begin"),
            line(10, "install", 1, "act action=swap path=/usr/local/bin/k3s from=" + OLD + " to=" + NEW),
            line(10, "install", 1, "end exit=0"),
            line(11, "install", 2, "begin"),
            line(11, "install", 2, "act action=swap path=/usr/local/bin/k3s from=" + NEW + " to=" + NEW),
            line(11, "install", 2, "end exit=0"));
    assertEquals(1, violations.size());
    assertEquals("swap", violations.get(0).action());
    assertEquals(2, violations.get(0).earlier());
    assertEquals(5, violations.get(0).repeat());
  }

  @Test
  void aSwapRepeatedAfterACompletedSwapIsSafeWhenTheScriptFoundTheTargetDifferentFromTheStagedFile() {
    // install journals from=differs when cmp found the target not the staged bytes (not hashed)
    assertEquals(
        List.of(),
        audit(
            line(10, "install", 1, "begin"),
            line(10, "install", 1, "act action=swap path=/usr/local/bin/k3s from=differs to=" + NEW),
            line(10, "install", 1, "end exit=0"),
            line(11, "restore", 1, "begin"),
            line(11, "restore", 1, "act action=restore path=/usr/local/bin/k3s from=" + NEW + " to=" + OLD),
            line(11, "restore", 1, "end exit=0"),
            line(12, "install", 2, "begin"),
            line(12, "install", 2, "act action=swap path=/usr/local/bin/k3s from=differs to=" + NEW),
            line(12, "install", 2, "end exit=0")));
  }

  @Test
  void aSwapWithoutItsObservationIsNotSafe() {
    assertEquals(
        1,
        audit(
                line(10, "install", 1, "begin"),
                line(10, "install", 1, "act action=swap path=/usr/local/bin/k3s from=" + OLD + " to=" + NEW),
                line(10, "install", 1, "end exit=0"),
                line(11, "install", 2, "begin"),
                line(11, "install", 2, "act action=swap path=/usr/local/bin/k3s to=" + NEW),
                line(11, "install", 2, "end exit=0"))
            .size());
  }

  @Test
  void aSecondRestartAfterACompletedRestartWithNothingSwappedBetweenIsAViolation() {
    List<JournalAudit.Violation> violations =
        audit(
            line(20, "restart", 1, "begin"),
            line(20, "restart", 1, "act action=restart service=k3s"),
            line(20, "restart", 1, "end exit=0"),
            line(21, "restart", 2, "begin"),
            line(21, "restart", 2, "act action=restart service=k3s"),
            line(21, "restart", 2, "end exit=0"));
    assertEquals(1, violations.size());
    assertEquals("k3s", violations.get(0).target());
  }

  @Test
  void aRestartAfterARestoreOrAfterACutOffRestartIsSafe() {
    assertEquals(
        List.of(),
        audit(
            line(20, "restart", 1, "begin"),
            line(20, "restart", 1, "act action=restart service=k3s"),
            line(20, "restart", 1, "end exit=0"),
            line(30, "restore", 1, "begin"),
            line(30, "restore", 1, "act action=restore path=/usr/local/bin/k3s from=" + NEW + " to=" + OLD),
            line(30, "restore", 1, "end exit=0"),
            line(31, "restart", 1, "begin"),
            line(31, "restart", 1, "act action=restart service=k3s"),
            line(31, "restart", 1, "end signal=HUP"),
            line(32, "restart", 2, "begin"),
            line(32, "restart", 2, "act action=restart service=k3s"),
            line(32, "restart", 2, "end exit=0")));
  }

  @Test
  void kubeadmUpgradeRepeatsAreSafeWhenTheManifestWasSeenBehindOrTheFirstFailed() {
    assertEquals(
        List.of(),
        audit(
            line(40, "upgrade", 1, "begin"),
            line(40, "upgrade", 1, "act action=kubeadm-upgrade mode=apply version=v1.31.2 observed=manifest-behind"),
            line(40, "upgrade", 1, "end exit=0"),
            line(41, "upgrade", 2, "begin"),
            line(41, "upgrade", 2, "act action=kubeadm-upgrade mode=apply version=v1.31.2 observed=manifest-behind"),
            line(41, "upgrade", 2, "end exit=0"),
            line(42, "upgrade", 1, "begin"),
            line(42, "upgrade", 1, "act action=kubeadm-upgrade mode=node version=v1.31.2 observed=none"),
            line(42, "upgrade", 1, "end exit=1"),
            line(43, "upgrade", 2, "begin"),
            line(43, "upgrade", 2, "act action=kubeadm-upgrade mode=node version=v1.31.2 observed=none"),
            line(43, "upgrade", 2, "end exit=0")));
    assertEquals(
        1,
        audit(
                line(42, "upgrade", 1, "begin"),
                line(42, "upgrade", 1, "act action=kubeadm-upgrade mode=node version=v1.31.2 observed=none"),
                line(42, "upgrade", 1, "end exit=0"),
                line(43, "upgrade", 2, "begin"),
                line(43, "upgrade", 2, "act action=kubeadm-upgrade mode=node version=v1.31.2 observed=none"),
                line(43, "upgrade", 2, "end exit=0"))
            .size());
  }

  @Test
  void journalsOfDifferentHostsAreAuditedApart() {
    HostJournal a =
        HostJournal.parse("w-0", List.of(line(20, "restart", 1, "begin"), line(20, "restart", 1, "act action=restart service=k3s"), line(20, "restart", 1, "end exit=0")));
    HostJournal b =
        HostJournal.parse("w-1", List.of(line(20, "restart", 1, "begin"), line(20, "restart", 1, "act action=restart service=k3s"), line(20, "restart", 1, "end exit=0")));
    assertEquals(List.of(), JournalAudit.audit(List.of(a, b)));
  }

  @Test
  void unreadableLinesAndUnknownActionsAreReportedNotDropped() {
    List<JournalAudit.Violation> violations =
        audit("garbage", line(20, "restart", 1, "act action=reformat"));
    assertEquals(List.of("unreadable", "unknown"), violations.stream().map(JournalAudit.Violation::action).toList());
  }

  @Test
  void aBeginWithoutAnEndIsAnOpenRun() {
    HostJournal journal =
        HostJournal.parse(
            "w-0",
            List.of(
                line(10, "install", 1, "begin"),
                line(11, "restart", 1, "begin"),
                line(11, "restart", 1, "end exit=0"),
                line(12, "install", 2, "begin"),
                line(12, "install", 2, "end signal=HUP")));
    assertEquals(List.of("install"), journal.openRuns().stream().map(ScriptRun::script).toList());
    assertEquals(3, journal.runs().size());
    assertTrue(journal.runs().get(1).succeeded());
    assertTrue(!journal.runs().get(2).succeeded() && !journal.runs().get(2).open());
  }

  @Test
  void aRunCutOffOrEndedByASignalIsInterruptedAndOneThatExitedIsNot() {
    HostJournal journal =
        HostJournal.parse(
            "w-0",
            List.of(
                line(10, "install", 1, "begin"),
                line(11, "install", 2, "begin"),
                line(11, "install", 2, "end signal=PIPE"),
                line(12, "install", 3, "begin"),
                line(12, "install", 3, "end exit=1"),
                line(13, "install", 4, "begin"),
                line(13, "install", 4, "end exit=0")));
    assertEquals(List.of(true, true, false, false), journal.runs().stream().map(ScriptRun::interrupted).toList());
  }

  @Test
  void entriesCarryTheirRunAttemptAndFields() {
    JournalEntry e = JournalEntry.parse("w-0", 3, line(12, "install", 2, "end exit=7"));
    assertEquals("node-upgrade-edge-1-w0", e.workflowId());
    assertEquals("6f1c", e.runId());
    assertEquals(2, e.attempt());
    assertEquals(JournalEntry.Event.END, e.event());
    assertEquals(7, e.exit().orElseThrow());
  }

  @Test
  void aKairosRebootIsSafeToRepeatOnlyWhileTheHostIsStillInTheBootItWasAskedFrom() {
    String asked = "act action=reboot from_boot=b1 observed=b1";
    assertEquals(List.of(), audit(line(20, "reboot", 1, "begin"), line(20, "reboot", 1, asked),
        line(20, "reboot", 1, "end exit=0"), line(21, "reboot", 2, "begin"), line(21, "reboot", 2, asked),
        line(21, "reboot", 2, "end exit=0")));
    List<JournalAudit.Violation> twice = audit(line(20, "reboot", 1, "begin"), line(20, "reboot", 1, asked),
        line(20, "reboot", 1, "end exit=0"), line(21, "reboot", 2, "begin"),
        line(21, "reboot", 2, "act action=reboot from_boot=b1 observed=b2"), line(21, "reboot", 2, "end exit=0"));
    assertEquals(List.of("reboot"), twice.stream().map(JournalAudit.Violation::action).toList());
  }
}
