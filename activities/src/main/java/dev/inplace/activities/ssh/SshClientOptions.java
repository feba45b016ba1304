package dev.inplace.activities.ssh;

import java.time.Duration;

/**
 * Timeouts of SSH connections.
 *
 * @param connectTimeout TCP connect to a host or its jump host
 * @param readTimeout how long to wait for the server during key exchange, authentication and
 *     channel setup
 * @param commandTimeout upper bound of one remote script; a script still running then is abandoned
 * @param keepAliveInterval how often an idle connection sends a keep-alive
 */
public record SshClientOptions(
    Duration connectTimeout,
    Duration readTimeout,
    Duration commandTimeout,
    Duration keepAliveInterval) {

  public SshClientOptions {
    requirePositive("connectTimeout", connectTimeout);
    requirePositive("readTimeout", readTimeout);
    requirePositive("commandTimeout", commandTimeout);
    requirePositive("keepAliveInterval", keepAliveInterval);
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
