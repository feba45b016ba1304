package dev.inplace.activities.ssh;

import java.time.Duration;

/**
 * When the scripts of one activity must be done by: every script on a connection gets what is left
 * until then, so a step with several scripts (stage: prepare, upload, commit) shares one budget.
 */
public final class ScriptDeadline {
  /** A script always gets at least this long, even when the budget is spent. */
  static final Duration MINIMUM = Duration.ofSeconds(1);

  private final long deadlineNanos;

  private ScriptDeadline(long deadlineNanos) {
    this.deadlineNanos = deadlineNanos;
  }

  /** {@code budget} from now. */
  public static ScriptDeadline after(Duration budget) {
    return new ScriptDeadline(System.nanoTime() + budget.toNanos());
  }

  /** What is left, at least {@link #MINIMUM}. */
  public Duration remaining() {
    Duration left = Duration.ofNanos(deadlineNanos - System.nanoTime());
    return left.compareTo(MINIMUM) < 0 ? MINIMUM : left;
  }
}
