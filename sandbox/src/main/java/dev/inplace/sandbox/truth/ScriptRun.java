package dev.inplace.sandbox.truth;

import java.util.List;
import java.util.Optional;

/**
 * One run of one script on one host, from its journal: its begin line, its end line unless it was
 * cut off (killed without a chance to write it, e.g. its SSH session dropped), and the destructive
 * actions it journaled in between.
 */
public record ScriptRun(JournalEntry begin, Optional<JournalEntry> end, List<JournalEntry> acts) {
  public ScriptRun {
    acts = List.copyOf(acts);
  }

  public String host() {
    return begin.host();
  }

  public String script() {
    return begin.script();
  }

  /** Began and never ended: the script was cut off. */
  public boolean open() {
    return end.isEmpty();
  }

  /**
   * Stopped before it could finish: cut off without an end line, or ended by a signal (HUP, PIPE,
   * TERM: its session dropped or it was told to stop, and its trap wrote the end line first).
   */
  public boolean interrupted() {
    return end.isEmpty() || !end.get().field("signal").isEmpty();
  }

  /** Ended with exit status 0: everything it did, it saw through to the end. */
  public boolean succeeded() {
    return end.flatMap(JournalEntry::exit).filter(e -> e == 0).isPresent();
  }
}
