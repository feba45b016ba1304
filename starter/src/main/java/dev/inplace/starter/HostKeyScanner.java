package dev.inplace.starter;

import java.io.IOException;
import java.net.ConnectException;
import java.net.NoRouteToHostException;
import java.net.SocketTimeoutException;
import java.net.UnknownHostException;
import java.security.PublicKey;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeoutException;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.common.Buffer;
import net.schmizz.sshj.common.KeyType;
import net.schmizz.sshj.transport.verification.HostKeyVerifier;

/**
 * Reads a host's SSH public keys the way {@code ssh-keyscan} does: one key exchange per host key
 * algorithm, ended as soon as the server has shown its key. It never authenticates and trusts
 * nothing: what it returns still has to be confirmed ({@link HostKeyTrust}) before it is pinned.
 */
final class HostKeyScanner {
  /**
   * The host key algorithms the product's connector accepts, one per key type (RSA keys are asked
   * for with rsa-sha2-512; their known_hosts type is ssh-rsa).
   */
  static final List<String> ALGORITHMS =
      List.of("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "rsa-sha2-512");

  private static final net.schmizz.sshj.common.LoggerFactory QUIET = new net.schmizz.sshj.common.LoggerFactory() {
    @Override
    public org.slf4j.Logger getLogger(String name) {
      return org.slf4j.helpers.NOPLogger.NOP_LOGGER;
    }

    @Override
    public org.slf4j.Logger getLogger(Class<?> clazz) {
      return org.slf4j.helpers.NOPLogger.NOP_LOGGER;
    }
  };

  private final Duration timeout;
  private final Map<String, DefaultConfig> configs = new LinkedHashMap<>();

  /** @param timeout bound of the TCP connect and of each key exchange */
  HostKeyScanner(Duration timeout) {
    if (timeout == null || timeout.isNegative() || timeout.isZero()) {
      throw new IllegalArgumentException("scan timeout must be positive, got " + timeout);
    }
    this.timeout = timeout;
    for (String algorithm : ALGORITHMS) {
      DefaultConfig config = new DefaultConfig();
      // sshj logs every refused key and unmatched algorithm as an ERROR: here they are the expected
      // end of each exchange, and what went wrong is reported by scan() itself.
      config.setLoggerFactory(QUIET);
      config.setKeyAlgorithms(config.getKeyAlgorithms().stream().filter(f -> f.getName().equals(algorithm)).toList());
      configs.put(algorithm, config);
    }
  }

  /**
   * The keys {@code address:port} shows, in the order of {@link #ALGORITHMS}.
   *
   * @throws Unreachable when the host does not answer (refused, no route, or silent past the timeout),
   *     or shows no key of a type inplace pins
   */
  List<HostKey> scan(String address, int port) {
    List<HostKey> keys = new ArrayList<>();
    for (Map.Entry<String, DefaultConfig> algorithm : configs.entrySet()) {
      PublicKey[] shown = new PublicKey[1];
      SSHClient client = new SSHClient(algorithm.getValue());
      client.addHostKeyVerifier(new HostKeyVerifier() {
        @Override
        public boolean verify(String host, int p, PublicKey key) {
          shown[0] = key;
          return false; // ends the exchange: nothing after the key is wanted
        }

        @Override
        public List<String> findExistingAlgorithms(String host, int p) {
          return List.of();
        }
      });
      int millis = (int) Math.min(Integer.MAX_VALUE, timeout.toMillis());
      client.setConnectTimeout(millis);
      client.setTimeout(millis);
      client.getTransport().setTimeoutMs(millis);
      try {
        client.connect(address, port);
      } catch (IOException | RuntimeException e) {
        if (shown[0] == null && unreachable(e)) {
          throw new Unreachable(address + ":" + port + " does not answer (" + reason(e) + ")");
        }
        // Otherwise: the key was shown and refused on purpose, or the host has no key of this type.
      } finally {
        close(client);
      }
      if (shown[0] != null) {
        keys.add(hostKey(shown[0]));
      }
    }
    if (keys.isEmpty()) {
      throw new Unreachable(address + ":" + port + " shows no host key of a type inplace pins (" + ALGORITHMS + ")");
    }
    return keys;
  }

  private static HostKey hostKey(PublicKey key) {
    byte[] blob = new Buffer.PlainBuffer().putPublicKey(key).getCompactData();
    return new HostKey(KeyType.fromKey(key).toString(), java.util.Base64.getEncoder().encodeToString(blob));
  }

  private static boolean unreachable(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof ConnectException || t instanceof NoRouteToHostException || t instanceof UnknownHostException
          || t instanceof SocketTimeoutException || t instanceof TimeoutException) {
        return true;
      }
      if (t.getMessage() != null && t.getMessage().contains("Timeout expired")) {
        return true;
      }
    }
    return false;
  }

  private String reason(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause() == t ? null : t.getCause()) {
      if (t instanceof ConnectException) {
        return "connection refused";
      }
      if (t instanceof NoRouteToHostException) {
        return "no route to host";
      }
      if (t instanceof UnknownHostException) {
        return "unknown host";
      }
    }
    return "no answer within " + timeout.toMillis() + " ms";
  }

  private static void close(SSHClient client) {
    try {
      client.close();
    } catch (IOException ignored) {
      // A half-open connection: nothing to report.
    }
  }

  /** The host could not be scanned. */
  static final class Unreachable extends RuntimeException {
    Unreachable(String message) {
      super(message);
    }
  }
}
