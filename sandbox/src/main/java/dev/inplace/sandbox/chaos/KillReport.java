package dev.inplace.sandbox.chaos;

import java.util.List;

/**
 * One kill in the summary ({@code killAttribution}), attributed twice (docs/reliability.md,
 * "Attributing a kill"): by the Temporal server (the attempts still open on the dead worker after
 * the SIGKILL) and by the hosts' journals (the scripts of those attempts running at the kill instant).
 *
 * @param kill its number, 1 for the first
 * @param atSeconds when the SIGKILL was sent, in seconds since the campaign started (as the log lines)
 * @param atEpochMillis the same instant in epoch milliseconds, the journals' clock ({@code ts=})
 * @param worker the stack's name of the killed worker process ({@code worker-1})
 * @param pid its process ID
 * @param restart how it came back: {@code at_once}, {@code delayed}, {@code all_down}
 * @param aim {@code new-kind} (aimed at a kind not hit yet), {@code in-flight} (aimed at whatever was
 *     in flight), {@code compensation} (aimed inside a failing node's compensation) or {@code unaimed}
 * @param activities the attempts the server still had open on the dead worker after the kill
 * @param journal the scripts of those attempts running at the kill instant, from the hosts' journals
 * @param midActivity either attribution found the kill inside an activity
 * @param inCompensation either found it inside a compensation: an attempt of a run rolling back (or
 *     {@code RestoreBinaries}), or a cut {@code restore} script
 */
public record KillReport(
    int kill,
    double atSeconds,
    long atEpochMillis,
    String worker,
    long pid,
    String restart,
    String aim,
    List<Activity> activities,
    List<JournalEvidence> journal,
    boolean midActivity,
    boolean inCompensation) {

  /** An attempt the server had open on the killed worker, with the kind it counts as. */
  public record Activity(String workflowId, String activity, int attempt, String kind) {}

  /**
   * A script of a killed attempt, from its host's journal: running at the kill instant, or begun
   * just after it (the dead worker had sent it before it died).
   *
   * @param line the journal line of its begin
   * @param beganAfterKillMillis when it began, in milliseconds after the kill instant (negative: before)
   * @param end how it ended, always after the kill instant: {@code none} (no end line: killed
   *     outright), {@code signal=HUP} (an end by signal), or {@code exit=N} (it ran to its end with the
   *     worker gone)
   * @param repeat the next run of the same script for the same run on that host, if any
   */
  public record JournalEvidence(String host, String script, String workflowId, int attempt, int line,
      long beganAfterKillMillis, String end, Repeat repeat) {}

  /**
   * The next run of the same script of the same workflow on the same host, after the cut one.
   *
   * @param end {@code exit=N}, {@code signal=X}, or {@code none}
   * @param acts its destructive actions as journaled ({@code restore path=... from=... to=...}), none
   *     when it observed the work done
   */
  public record Repeat(int line, int attempt, String end, List<String> acts) {}
}
