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
 */
public record SshClientOptions(
    Duration connectTimeout,
    Duration readTimeout,
    Duration commandTimeout,
    Duration keepAliveInterval,
    Duration idleTimeout) {

  /** Options that keep idle connections for two minutes. */
  public SshClientOptions(
      Duration connectTimeout,
      Duration readTimeout,
      Duration commandTimeout,
      Duration keepAliveInterval) {
    this(connectTimeout, readTimeout, commandTimeout, keepAliveInterval, DEFAULT_IDLE_TIMEOUT);
  }

  public static final Duration DEFAULT_IDLE_TIMEOUT = Duration.ofMinutes(2);

  public SshClientOptions {
    requirePositive("connectTimeout", connectTimeout);
    requirePositive("readTimeout", readTimeout);
    requirePositive("commandTimeout", commandTimeout);
    requirePositive("keepAliveInterval", keepAliveInterval);
    if (idleTimeout == null || idleTimeout.isNegative()) {
      throw new IllegalArgumentException("idleTimeout must be zero or positive, got " + idleTimeout);
    }
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
