package dev.inplace.activities.ssh;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.schmizz.sshj.common.DisconnectReason;
import net.schmizz.sshj.common.SSHException;
import net.schmizz.sshj.transport.Transport;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.userauth.UserAuthException;

/**
 * Translates sshj exceptions into the failure vocabulary at the SSH boundary. Messages name the
 * host and what went wrong; they never carry key material, and library causes are not attached, so
 * nothing a library put in its message can reach a workflow history.
 */
final class SshFailures {
  private SshFailures() {}

  static ApplicationFailure translate(String host, IOException e, PinnedHostKeys hostKeys) {
    PinnedHostKeys.Rejection rejection = hostKeys.rejection();
    if (rejection != null || reason(e) == DisconnectReason.HOST_KEY_NOT_VERIFIABLE) {
      String detail =
          rejection == null ? "its host key could not be verified" : rejection.describe();
      return UpgradeFailures.nonRetryable(
          UpgradeFailures.HOST_KEY_MISMATCH, "refusing to connect to " + host + ": " + detail);
    }
    ApplicationFailure algorithms = algorithmsRefused(host, e);
    if (algorithms != null) {
      return algorithms;
    }
    if (isAuthFailure(e)) {
      return UpgradeFailures.nonRetryable(
          UpgradeFailures.SSH_AUTH_FAILED,
          "SSH authentication to " + host + " failed: the server did not accept the key");
    }
    return unreachable(host, e);
  }

  /**
   * sshj refused to start the key exchange because the transport was no longer running ("Not
   * connected"): the server closed the connection during the handshake. The transport's own death
   * cause (e.g. no common algorithm) is translated as any handshake failure; without one, the
   * host is reported unreachable, retryably, so the next attempt sees the real answer.
   */
  static ApplicationFailure handshakeCut(
      String host, Transport transport, IllegalStateException e, PinnedHostKeys hostKeys) {
    if (transport != null && !transport.isRunning()) {
      try {
        transport.join(1, TimeUnit.SECONDS);
      } catch (TransportException death) {
        return translate(host, death, hostKeys);
      }
    }
    return unreachable(
        host, new IOException("the server closed the connection during the handshake"));
  }

  /**
   * sshj's "Unable to reach a settlement of KeyExchangeAlgorithms: [ours] and [theirs]" as a
   * message that says which kind of algorithm the server lacks, what it offers and what we accept.
   */
  static ApplicationFailure algorithmsRefused(String host, Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      Matcher m = t.getMessage() == null ? null : SETTLEMENT.matcher(t.getMessage());
      if (m != null && m.find()) {
        String what = m.group(1);
        String kind =
            what.contains("KeyExchange") ? "key exchange"
                : what.contains("HostKey") ? "host key"
                : what.contains("Cipher") ? "cipher"
                : what.contains("MAC") ? "MAC"
                : "compression";
        return UpgradeFailures.nonRetryable(
            UpgradeFailures.SSH_ALGORITHMS_UNSUPPORTED,
            "refusing to connect to "
                + host
                + ": it offers no "
                + kind
                + " algorithm inplace accepts (server offers "
                + m.group(3)
                + "; inplace accepts "
                + m.group(2)
                + "). Legacy algorithms (3DES, arcfour, CBC, hmac-md5, hmac-sha1, ssh-dss, ssh-rsa"
                + " SHA-1 signatures, SHA-1 key exchange) are disabled: update the host's SSH"
                + " server configuration.");
      }
    }
    return null;
  }

  private static final Pattern SETTLEMENT =
      Pattern.compile("Unable to reach a settlement of (\\w+): (\\[[^\\]]*\\]) and (\\[[^\\]]*\\])");

  static ApplicationFailure unreachable(String host, IOException e) {
    return UpgradeFailures.retryable(
        UpgradeFailures.HOST_UNREACHABLE, "cannot reach " + host + ": " + describe(e));
  }

  private static boolean isAuthFailure(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof UserAuthException) {
        return true;
      }
    }
    return false;
  }

  private static DisconnectReason reason(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof SSHException s && s.getDisconnectReason() != DisconnectReason.UNKNOWN) {
        return s.getDisconnectReason();
      }
    }
    return DisconnectReason.UNKNOWN;
  }

  /** Class and message of the innermost cause: "ConnectException: Connection refused". */
  private static String describe(Throwable e) {
    Throwable root = e;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = root.getMessage();
    return root.getClass().getSimpleName() + (message == null ? "" : ": " + message);
  }
}
