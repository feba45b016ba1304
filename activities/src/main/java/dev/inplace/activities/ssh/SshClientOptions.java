package dev.inplace.activities.ssh;

import java.time.Duration;

/**
 * Timeouts of SSH connections.
 *
 * @param connectTimeout TCP connect to a host or its jump host
 * @param readTimeout how long to wait for the server during key exchange, authentication and
 *     channel setup
 * @param commandTimeout bound of the scripts on a connection opened outside an activity; inside an
 *     activity they are bounded by what is left of its start-to-close timeout instead, except the
 *     staging scripts, bounded by this too (their activity's half hour is for the uploads)
 * @param keepAliveInterval how often an idle connection sends a keep-alive
 * @param idleTimeout how long a connection no step uses is kept for the host's next step (zero:
 *     every step connects anew)
 * @param silenceLimit how long a running script may send nothing before it counts as hung and is cut
 *     (retryable {@code StepTimedOut}): every script writes a newline to stderr every 2 s while it
 *     runs (scripts/lib/pulse.sh), so only a stopped script, or a lost host or connection, falls silent
 */
public record SshClientOptions(
    Duration connectTimeout,
    Duration readTimeout,
    Duration commandTimeout,
    Duration keepAliveInterval,
    Duration idleTimeout,
    Duration silenceLimit) {

  /** Options with the default silence limit. */
  public SshClientOptions(
      Duration connectTimeout,
      Duration readTimeout,
      Duration commandTimeout,
      Duration keepAliveInterval,
      Duration idleTimeout) {
    this(connectTimeout, readTimeout, commandTimeout, keepAliveInterval, idleTimeout, DEFAULT_SILENCE_LIMIT);
  }

  /** Options that keep idle connections for two minutes. */
  public SshClientOptions(
      Duration connectTimeout,
      Duration readTimeout,
      Duration commandTimeout,
      Duration keepAliveInterval) {
    this(connectTimeout, readTimeout, commandTimeout, keepAliveInterval, DEFAULT_IDLE_TIMEOUT);
  }

  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(2);

  /**
   * Seven missed pulses: far beyond a loaded host's scheduling delays, and within the 15 s heartbeat
   * timeout of a host step, so a hung script costs about what a dead worker does.
   */
  public static final Duration DEFAULT_SILENCE_LIMIT = Duration.ofSeconds(15);

  /** These options with another silence limit. */
  public SshClientOptions withSilenceLimit(Duration limit) {
    return new SshClientOptions(connectTimeout, readTimeout, commandTimeout, keepAliveInterval, idleTimeout, limit);
  }

  public SshClientOptions {
    requirePositive("connectTimeout", connectTimeout);
    requirePositive("readTimeout", readTimeout);
    requirePositive("commandTimeout", commandTimeout);
    requirePositive("keepAliveInterval", keepAliveInterval);
    if (idleTimeout == null || idleTimeout.isNegative()) {
      throw new IllegalArgumentException("idleTimeout must be zero or positive, got " + idleTimeout);
    }
    requirePositive("silenceLimit", silenceLimit);
  }

  public static SshClientOptions defaults() {
    return new SshClientOptions(
        Duration.ofSeconds(10),
        Duration.ofSeconds(30),
        Duration.ofMinutes(2),
        Duration.ofSeconds(15));
  }

  private static void requirePositive(String what, Duration value) {
    if (value == null || value.isNegative() || value.isZero()) {
      throw new IllegalArgumentException(what + " must be a positive duration, got " + value);
    }
  }
}
