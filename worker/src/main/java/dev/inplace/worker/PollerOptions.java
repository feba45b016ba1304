package dev.inplace.worker;

import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * How the Temporal worker polls, read from the environment. Only the local stack of processes sets
 * anything here: production keeps the SDK's sticky execution as it is.
 *
 * @param stickyScheduleToStart how long a workflow task waits on this worker's sticky queue before
 *     Temporal gives it to any worker; empty keeps the SDK default (5 s). Temporal's test server never
 *     falls back from a sticky queue whose worker died, so the local stack sets 0 (no sticky queue) for
 *     a killed worker's runs to move to the others.
 */
public record PollerOptions(Optional<Duration> stickyScheduleToStart) {
  public static final String STICKY_SCHEDULE_TO_START_SECONDS = "INPLACE_STICKY_SCHEDULE_TO_START_SECONDS";

  /** Every key {@link #fromEnvironment} reads; docs/configuration.md lists each (a test checks). */
  public static final List<String> KEYS = List.of(STICKY_SCHEDULE_TO_START_SECONDS);

  public static PollerOptions defaults() {
    return new PollerOptions(Optional.empty());
  }

  public static PollerOptions fromEnvironment(Map<String, String> env) {
    String value = env.get(STICKY_SCHEDULE_TO_START_SECONDS);
    if (value == null || value.isBlank()) {
      return defaults();
    }
    try {
      long seconds = Long.parseLong(value.trim());
      if (seconds < 0 || seconds > 3600) {
        throw new NumberFormatException();
      }
      return new PollerOptions(Optional.of(Duration.ofSeconds(seconds)));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "invalid worker configuration: " + STICKY_SCHEDULE_TO_START_SECONDS + " must be whole seconds 0..3600, got '"
              + value + "'");
    }
  }
}
