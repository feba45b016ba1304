package dev.inplace.activities.ssh;

import java.security.Security;
import org.bouncycastle.jce.provider.BouncyCastleProvider;

import dev.inplace.activities.support.SecretSource;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.common.Factory;
import net.schmizz.sshj.common.SecurityUtils;
import net.schmizz.sshj.connection.channel.direct.DirectConnection;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;

/**
 * Opens authenticated SSH connections to hosts, with their host keys pinned from the cluster's
 * known_hosts Secret and the private key from its key Secret. The Secrets are read on every open,
 * key material is kept in memory only and never appears in a failure message. A connection a step
 * is done with is kept for the host's next step ({@link IdleConnections}) for the idle timeout.
 */
public final class SshConnector {

  static {
    // BouncyCastle as sshj's provider makes transfers 3-4 times slower; JCE's AES-GCM is fast.
    SecurityUtils.setRegisterBouncyCastle(false);
    SecurityUtils.setSecurityProvider(null);
    // sshj still asks the JCA for algorithms only BouncyCastle provides (the "ECDSA" KeyFactory for
    // ecdsa-sha2-* keys and known_hosts lines): append it with the lowest priority, so those resolve
    // while every algorithm the JDK has (AES-GCM above all) still comes from the JDK.
    if (Security.getProvider(BouncyCastleProvider.PROVIDER_NAME) == null) {
      Security.addProvider(new BouncyCastleProvider());
    }
  }


  private final SecretSource secrets;
  private final SshClientOptions options;
  private final DefaultConfig config;
  private final IdleConnections idle;

  public SshConnector(SecretSource secrets, SshClientOptions options) {
    this.secrets = secrets;
    this.options = options;
    this.config = modernConfig();
    this.idle = new IdleConnections(options.idleTimeout(), System::nanoTime);
    if (!options.idleTimeout().isZero()) {
      EXPIRY.scheduleWithFixedDelay(idle::expire, 15, 15, TimeUnit.SECONDS);
    }
  }

  /** One daemon thread for all connectors: closes connections idle past their time. */
  private static final ScheduledExecutorService EXPIRY =
      Executors.newSingleThreadScheduledExecutor(
          r -> {
            Thread t = new Thread(r, "ssh-idle-expiry");
            t.setDaemon(true);
            return t;
          });

  public SshClientOptions options() {
    return options;
  }

  /** {@link #open(HostAccess, ScriptDeadline)} with scripts bounded by the default timeout. */
  public HostConnection open(HostAccess host) {
    return open(host, ScriptDeadline.after(options.commandTimeout()));
  }

  /**
   * Connects to {@code host} (through its jump host if it has one) and authenticates.
   *
   * @param deadline when every script run on the connection must be done by
   * @throws ApplicationFailure {@code HostKeyMismatch}, {@code SshAuthFailed}, {@code
   *     HostUnreachable} or {@code SecretNotFound}
   */
  public HostConnection open(HostAccess host, ScriptDeadline deadline) {
    SshSettings ssh = host.ssh();
    byte[] knownHosts =
        secretValue(
            host.secretNamespace(), ssh.knownHostsSecret(), SshSettings.KNOWN_HOSTS_DATA_KEY);
    byte[] privateKey =
        secretValue(
            host.secretNamespace(), ssh.privateKeySecret(), SshSettings.PRIVATE_KEY_DATA_KEY);
    IdleConnections.Key key =
        IdleConnections.Key.of(
            host.address(), ssh.port(), ssh.user(), ssh.jumpHost(), knownHosts, privateKey);
    HostConnection.Reconnect reconnect = () -> connect(host, knownHosts, privateKey);
    HostConnection.Release release =
        (link, reusable) -> {
          if (reusable) {
            idle.put(key, link);
          } else {
            link.close();
          }
        };
    IdleConnections.Link kept = idle.take(key);
    if (kept != null) {
      return new HostConnection(host, kept, true, deadline, options.silenceLimit(), reconnect, release);
    }
    return new HostConnection(
        host, reconnect.connect(), false, deadline, options.silenceLimit(), reconnect, release);
  }

  /** Closes the connections kept for later steps. */
  public void closeIdle() {
    idle.closeAll();
  }

  /** Connections kept for later steps (for tests). */
  int idleConnections() {
    return idle.size();
  }

  private IdleConnections.Link connect(HostAccess host, byte[] knownHosts, byte[] privateKey) {
    SshSettings ssh = host.ssh();
    PinnedHostKeys hostKeys = pinnedHostKeys(host, knownHosts);
    String keyText = new String(privateKey, StandardCharsets.UTF_8);
    // An unreadable key is refused before any connection is made.
    readableKey(new SSHClient(config), keyText, host);

    SSHClient jump = null;
    SSHClient client = null;
    String target = host.address() + ":" + ssh.port();
    String current = target;
    try {
      if (ssh.jumpHost() == null || ssh.jumpHost().isBlank()) {
        client = newClient(hostKeys);
        client.connect(host.address(), ssh.port());
      } else {
        SshSettings.JumpHost via = jumpHost(ssh.jumpHost());
        current = via.host() + ":" + via.port() + " (jump host)";
        jump = newClient(hostKeys);
        jump.connect(via.host(), via.port());
        authenticate(jump, ssh, keyText, host);
        current = target + " via " + via.host() + ":" + via.port();
        DirectConnection tunnel = jump.newDirectConnection(host.address(), ssh.port());
        client = newClient(hostKeys);
        client.connectVia(tunnel);
      }
      authenticate(client, ssh, keyText, host);
      return new IdleConnections.Link(client, jump);
    } catch (IOException e) {
      closeQuietly(client);
      closeQuietly(jump);
      throw SshFailures.translate(current, e, hostKeys);
    } catch (IllegalStateException e) {
      // sshj checks "connected" before its key exchange; a server that already hung up (it found
      // no algorithm in common) fails that check, and the dead transport holds the real reason.
      SSHClient handshaking = client != null ? client : jump;
      closeQuietly(client);
      closeQuietly(jump);
      throw SshFailures.handshakeCut(
          current, handshaking == null ? null : handshaking.getTransport(), e, hostKeys);
    } catch (RuntimeException e) {
      closeQuietly(client);
      closeQuietly(jump);
      throw e;
    }
  }

  private SSHClient newClient(PinnedHostKeys hostKeys) {
    SSHClient client = new SSHClient(config);
    client.addHostKeyVerifier(hostKeys);
    client.setConnectTimeout(millis(options.connectTimeout()));
    client.setTimeout(millis(options.readTimeout()));
    client.getTransport().setTimeoutMs(millis(options.readTimeout()));
    client
        .getConnection()
        .getKeepAlive()
        .setKeepAliveInterval((int) Math.max(1, options.keepAliveInterval().toSeconds()));
    return client;
  }

  private void authenticate(SSHClient client, SshSettings ssh, String keyText, HostAccess host)
      throws IOException {
    client.authPublickey(ssh.user(), readableKey(client, keyText, host));
  }

  private static KeyProvider readableKey(SSHClient client, String keyText, HostAccess host) {
    SshSettings ssh = host.ssh();
    KeyProvider key;
    try {
      key = client.loadKeys(keyText, null, null);
      key.getPublic(); // parse now, so an unreadable key is reported as such
    } catch (IOException | RuntimeException e) {
      // The library's message is not used: it could quote the key file.
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.SSH_AUTH_FAILED,
          "the private key in Secret "
              + host.secretNamespace()
              + "/"
              + ssh.privateKeySecret()
              + " (data key "
              + SshSettings.PRIVATE_KEY_DATA_KEY
              + ") is not a readable unencrypted SSH private key");
    }
    return key;
  }

  private PinnedHostKeys pinnedHostKeys(HostAccess host, byte[] knownHosts) {
    try {
      return PinnedHostKeys.parse(knownHosts);
    } catch (IOException e) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.HOST_KEY_MISMATCH,
          "cannot read known_hosts from Secret "
              + host.secretNamespace()
              + "/"
              + host.ssh().knownHostsSecret()
              + ": "
              + e.getMessage());
    }
  }

  private byte[] secretValue(String namespace, String name, String dataKey) {
    Map<String, byte[]> data = secrets.read(namespace, name);
    byte[] value = data == null ? null : data.get(dataKey);
    if (value == null || value.length == 0) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.SECRET_NOT_FOUND,
          "Secret " + namespace + "/" + name + " has no data key '" + dataKey + "'");
    }
    return value;
  }

  /**
   * Modern algorithms only, in order of preference: a server that offers nothing here (3DES,
   * arcfour, hmac-md5, ssh-dss, SHA-1 key exchange only) is refused at key exchange. AES-GCM comes
   * first because the JDK's implementation is the fastest cipher we have.
   */
  static final List<String> KEY_EXCHANGES =
      List.of(
          "curve25519-sha256",
          "curve25519-sha256@libssh.org",
          "ecdh-sha2-nistp256",
          "ecdh-sha2-nistp384",
          "ecdh-sha2-nistp521",
          // Not an algorithm: asks the server for server-sig-algs, so rsa-sha2 client keys work.
          "ext-info-c");

  static final List<String> HOST_KEY_ALGORITHMS =
      List.of(
          "ssh-ed25519",
          "ecdsa-sha2-nistp256",
          "ecdsa-sha2-nistp384",
          "ecdsa-sha2-nistp521",
          "rsa-sha2-512",
          "rsa-sha2-256");

  static final List<String> CIPHERS =
      List.of(
          "aes128-gcm@openssh.com",
          "aes256-gcm@openssh.com",
          "chacha20-poly1305@openssh.com",
          "aes128-ctr",
          "aes192-ctr",
          "aes256-ctr");

  static final List<String> MACS =
      List.of("hmac-sha2-256-etm@openssh.com", "hmac-sha2-512-etm@openssh.com");

  static DefaultConfig modernConfig() {
    DefaultConfig config = new DefaultConfig();
    config.setKeyExchangeFactories(only(KEY_EXCHANGES, config.getKeyExchangeFactories()));
    config.setKeyAlgorithms(only(HOST_KEY_ALGORITHMS, config.getKeyAlgorithms()));
    config.setCipherFactories(only(CIPHERS, config.getCipherFactories()));
    config.setMACFactories(only(MACS, config.getMACFactories()));
    return config;
  }

  /** The library's factories named in {@code wanted}, in that order; every name must exist. */
  private static <T extends Factory.Named<?>> List<T> only(List<String> wanted, List<T> available) {
    List<T> chosen = new ArrayList<>();
    for (String name : wanted) {
      T factory =
          available.stream()
              .filter(f -> f.getName().equals(name))
              .findFirst()
              .orElseThrow(
                  () -> new IllegalStateException("sshj offers no SSH algorithm " + name));
      chosen.add(factory);
    }
    return chosen;
  }

  static void closeQuietly(SSHClient client) {
    if (client == null) {
      return;
    }
    try {
      client.close();
    } catch (IOException ignored) {
      // Closing a half-open connection: nothing useful to report.
    }
  }

  private static int millis(java.time.Duration d) {
    return (int) Math.min(Integer.MAX_VALUE, d.toMillis());
  }

  /** A bastion given as {@code host[:port]}; a malformed one is the run's InvalidRequest. */
  static SshSettings.JumpHost jumpHost(String text) {
    try {
      return SshSettings.JumpHost.parse(text);
    } catch (IllegalArgumentException e) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, e.getMessage());
    }
  }
}
