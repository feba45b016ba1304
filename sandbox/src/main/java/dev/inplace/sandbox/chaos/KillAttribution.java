package dev.inplace.sandbox.chaos;

import dev.inplace.sandbox.chaos.KillReport.JournalEvidence;
import dev.inplace.sandbox.chaos.KillReport.Repeat;
import dev.inplace.sandbox.stack.StackLayout;
import dev.inplace.sandbox.truth.HostJournal;
import dev.inplace.sandbox.truth.JournalEntry;
import dev.inplace.sandbox.truth.ScriptRun;
import java.math.BigDecimal;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalLong;

/**
 * Where a kill landed, told by the hosts' journals (docs/reliability.md, "Attributing a kill"): the
 * script runs of the killed worker's activity attempts that were running on their host at the kill
 * instant, and what the next attempt of the same script did there.
 */
final class KillAttribution {
  /**
   * How much earlier than the server's start of an attempt its script may seem to begin: the
   * server's and the hosts' clocks are this machine's, the server's is read in milliseconds.
   */
  static final long CLOCK_SLACK_MILLIS = 1_000;

  /**
   * How long after the kill a script of a killed attempt may begin and still count: the worker sent
   * it before it died (no other worker runs that attempt; a retry is the next attempt), and SSH
   * delivered it after. Seen: a restart that began 38 ms after its worker's SIGKILL.
   */
  static final long SENT_BEFORE_MILLIS = 5_000;

  private KillAttribution() {}

  /**
   * The journal evidence of one kill: for each attempt the killed worker was running (the server's
   * word), every run of a script that activity runs, journaled with the attempt's workflow ID and
   * attempt number (and begun no earlier than the attempt started), that was running at {@code
   * killAtMillis}: begun at or before it with no end line before it; or begun within {@link
   * #SENT_BEFORE_MILLIS} after it. API-only activities (drain, the waits of verify, the Kubernetes and
   * Cluster API calls) run no script and leave no journal evidence.
   */
  static List<JournalEvidence> evidence(long killAtMillis, List<ActivityWatch.InFlight> attempts,
      List<HostJournal> journals) {
    List<JournalEvidence> found = new ArrayList<>();
    for (HostJournal journal : journals) {
      List<ScriptRun> runs = journal.runs();
      for (int i = 0; i < runs.size(); i++) {
        ScriptRun run = runs.get(i);
        OptionalLong began = millis(run.begin());
        if (attempts.stream().anyMatch(a -> belongs(run, a)) && began.isPresent()
            && (openAt(run, killAtMillis) || sentBefore(began.getAsLong(), killAtMillis))) {
          found.add(new JournalEvidence(journal.host(), run.script(), run.begin().workflowId(), run.begin().attempt(),
              run.begin().line(), began.getAsLong() - killAtMillis, run.end().map(KillAttribution::endText).orElse("none"),
              repeat(run, runs.subList(i + 1, runs.size())).orElse(null)));
        }
      }
    }
    return found;
  }

  /**
   * One kill in the summary: the server's attempts and the journals' evidence for them (the
   * attempt it aimed at is searched for in the journals too, should the server have lost it).
   *
   * @param startEpochMillis when the campaign started, for {@code atSeconds}
   */
  static KillReport report(int number, WorkerKiller.Kill kill, long startEpochMillis, List<HostJournal> journals) {
    List<ActivityWatch.InFlight> attempts = new ArrayList<>(kill.inFlight());
    ActivityWatch.InFlight aimed = kill.aimed();
    if (aimed != null && aimed.workerPid() == kill.pid() && attempts.stream().noneMatch(a -> a.sameAttempt(aimed))) {
      attempts.add(aimed);
    }
    List<JournalEvidence> journal = evidence(kill.atMillis(), attempts, journals);
    List<KillReport.Activity> activities = kill.inFlight().stream()
        .map(a -> new KillReport.Activity(a.workflowId(), a.activity(), a.attempt(), a.kind().label()))
        .toList();
    return new KillReport(number, Math.round((kill.atMillis() - startEpochMillis) / 100.0) / 10.0, kill.atMillis(),
        StackLayout.worker(kill.worker()), kill.pid(), kill.restart().name().toLowerCase(Locale.ROOT),
        kill.aim().label(), activities, journal, kill.midActivity() || !journal.isEmpty(),
        kill.inCompensation() || inCompensation(journal));
  }

  /** Whether a kill with this evidence landed inside a compensation, by the journal: the restore script was cut. */
  static boolean inCompensation(List<JournalEvidence> evidence) {
    return evidence.stream().anyMatch(e -> e.script().equals(KillKind.RESTORE_SCRIPT));
  }

  /** The run is one of {@code attempt}'s scripts: same workflow, same attempt, a script that activity runs, begun after it started. */
  static boolean belongs(ScriptRun run, ActivityWatch.InFlight attempt) {
    JournalEntry begin = run.begin();
    if (!begin.workflowId().equals(attempt.workflowId()) || begin.attempt() != attempt.attempt()
        || !KillKind.scriptsOf(attempt.activity()).contains(run.script())) {
      return false;
    }
    OptionalLong began = millis(begin);
    return attempt.startedAtMillis() <= 0
        || (began.isPresent() && began.getAsLong() >= attempt.startedAtMillis() - CLOCK_SLACK_MILLIS);
  }

  /** Began at or before the instant, and had no end line before it (none at all, or one written at or after it). */
  static boolean openAt(ScriptRun run, long instantMillis) {
    OptionalLong began = millis(run.begin());
    if (began.isEmpty() || began.getAsLong() > instantMillis) {
      return false;
    }
    if (run.end().isEmpty()) {
      return true;
    }
    OptionalLong ended = millis(run.end().get());
    return ended.isEmpty() || ended.getAsLong() >= instantMillis;
  }

  private static boolean sentBefore(long beganMillis, long killAtMillis) {
    return beganMillis > killAtMillis && beganMillis <= killAtMillis + SENT_BEFORE_MILLIS;
  }

  private static Optional<Repeat> repeat(ScriptRun cut, List<ScriptRun> later) {
    return later.stream()
        .filter(r -> r.script().equals(cut.script())
            && r.begin().workflowId().equals(cut.begin().workflowId())
            && r.begin().attempt() > cut.begin().attempt())
        .findFirst()
        .map(r -> new Repeat(r.begin().line(), r.begin().attempt(), r.end().map(KillAttribution::endText).orElse("none"),
            r.acts().stream().map(KillAttribution::actText).toList()));
  }

  private static String endText(JournalEntry end) {
    String signal = end.field("signal");
    return !signal.isEmpty() ? "signal=" + signal : "exit=" + end.field("exit");
  }

  private static String actText(JournalEntry act) {
    StringBuilder text = new StringBuilder(act.action());
    act.fields().forEach((k, v) -> {
      if (!k.equals("action")) {
        text.append(' ').append(k).append('=').append(v);
      }
    });
    return text.toString();
  }

  /** A journal line's instant in epoch milliseconds ({@code ts=} is epoch seconds, with microseconds). */
  static OptionalLong millis(JournalEntry entry) {
    try {
      return OptionalLong.of(new BigDecimal(entry.timestamp()).movePointRight(3).longValue());
    } catch (NumberFormatException e) {
      return OptionalLong.empty();
    }
  }
}
