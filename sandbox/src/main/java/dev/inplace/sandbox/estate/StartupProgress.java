package dev.inplace.sandbox.estate;

import java.time.Duration;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Consumer;
import java.util.function.LongSupplier;

/**
 * What the estate's start-up tells its log: each phase with the seconds since the start, and while
 * the hosts are provisioned (the part that grows with the node count) how many are done, at most
 * every {@link #HOSTS_EVERY}. The estate process logs nothing else until it is ready (its log level
 * is WARN), so without these lines a start-up that is slow or stuck leaves an empty log.
 */
final class StartupProgress {
  /** How often, at most, a line about the hosts provisioned so far is written. */
  static final Duration HOSTS_EVERY = Duration.ofSeconds(5);

  private final Consumer<String> out;
  private final LongSupplier nanos;
  private final int hosts;
  private final long started;
  private long lastHostsLine;

  StartupProgress(Consumer<String> out, LongSupplier nanos, int hosts) {
    this.out = Objects.requireNonNull(out);
    this.nanos = Objects.requireNonNull(nanos);
    this.hosts = hosts;
    this.started = nanos.getAsLong();
    this.lastHostsLine = started;
  }

  /** A phase of the start-up is done. */
  void phase(String what) {
    out.accept(String.format(Locale.ROOT, "estate: %s (%.1f s)", what, seconds(nanos.getAsLong())));
  }

  /** {@code done} of the estate's hosts are provisioned (their SSH servers up). */
  void hostProvisioned(int done) {
    long now = nanos.getAsLong();
    if (done < hosts && now - lastHostsLine >= HOSTS_EVERY.toNanos()) {
      lastHostsLine = now;
      out.accept(String.format(Locale.ROOT, "estate: hosts %d/%d provisioned (%.1f s)", done, hosts, seconds(now)));
    }
  }

  private double seconds(long now) {
    return (now - started) / 1e9;
  }
}
