package dev.inplace.activities.kube;

import java.time.Duration;

/**
 * The waits of one observe-act loop (drain, await a node): short at first, since the state usually
 * changes within moments of the loop's own action (an eviction, a restart), then growing by half
 * each time up to {@code max}, so a long wait costs the API server no more than a fixed poll at
 * {@code max} would, plus one look per change the loop waits for when a {@link ChangeSignal} wakes
 * it (the drain never looks sooner than {@link #FIRST} after its last look). Not thread-safe: one
 * per loop.
 */
final class PollBackoff {
  static final Duration FIRST = Duration.ofMillis(50);

  private final long maxMillis;
  private long nextMillis;

  PollBackoff(Duration max) {
    this(FIRST, max);
  }

  /** @param first the first wait, {@link #FIRST} but in tests that need long waits at once */
  PollBackoff(Duration first, Duration max) {
    this.maxMillis = Math.max(1, max.toMillis());
    this.nextMillis = Math.max(1, Math.min(first.toMillis(), maxMillis));
  }

  /** The wait before the next look; each call returns the next one. */
  long nextMillis() {
    long now = nextMillis;
    nextMillis = Math.min(maxMillis, Math.max(now + 1, now * 3 / 2));
    return now;
  }
}
