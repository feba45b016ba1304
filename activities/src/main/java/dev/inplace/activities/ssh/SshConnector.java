package dev.inplace.activities.ssh;

import java.security.Security;
import org.bouncycastle.jce.provider.BouncyCastleProvider;

import com.hierynomus.sshj.transport.cipher.GcmCiphers;
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
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.common.Factory;
import net.schmizz.sshj.common.SecurityUtils;
import net.schmizz.sshj.connection.channel.direct.DirectConnection;
import net.schmizz.sshj.transport.cipher.Cipher;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;

/**
 * Opens authenticated SSH connections to hosts, with their host keys pinned from the cluster's
 * known_hosts Secret and the private key from its key Secret. Key material is read per connection,
 * kept in memory only, and never appears in a failure message.
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

  private static final int DEFAULT_JUMP_PORT = 22;

  private final SecretSource secrets;
  private final SshClientOptions options;
  private final DefaultConfig config;

  public SshConnector(SecretSource secrets, SshClientOptions options) {
    this.secrets = secrets;
    this.options = options;
    this.config = fastCipherConfig();
  }

  public SshClientOptions options() {
    return options;
  }

  /**
   * Connects to {@code host} (through its jump host if it has one) and authenticates.
   *
   * @throws ApplicationFailure {@code HostKeyMismatch}, {@code SshAuthFailed}, {@code
   *     HostUnreachable} or {@code SecretNotFound}
   */
  public HostConnection open(HostAccess host) {
    SshSettings ssh = host.ssh();
    byte[] knownHosts =
        secretValue(
            host.secretNamespace(), ssh.knownHostsSecret(), SshSettings.KNOWN_HOSTS_DATA_KEY);
    byte[] privateKey =
        secretValue(
            host.secretNamespace(), ssh.privateKeySecret(), SshSettings.PRIVATE_KEY_DATA_KEY);
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
        JumpHost via = JumpHost.parse(ssh.jumpHost());
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
      return new HostConnection(host, client, jump, options.commandTimeout());
    } catch (IOException e) {
      closeQuietly(client);
      closeQuietly(jump);
      throw SshFailures.translate(current, e, hostKeys);
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

  /** JCE AES-GCM first; chacha20-poly1305 needs BouncyCastle as provider, so it is left out. */
  static DefaultConfig fastCipherConfig() {
    DefaultConfig config = new DefaultConfig();
    List<Factory.Named<Cipher>> ciphers = new ArrayList<>();
    ciphers.add(GcmCiphers.AES128GCM());
    ciphers.add(GcmCiphers.AES256GCM());
    for (Factory.Named<Cipher> cipher : config.getCipherFactories()) {
      String name = cipher.getName();
      boolean listed = ciphers.stream().anyMatch(c -> c.getName().equals(name));
      if (!listed && !name.startsWith("chacha20")) {
        ciphers.add(cipher);
      }
    }
    config.setCipherFactories(ciphers);
    return config;
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

  /** A bastion given as {@code host[:port]}. */
  record JumpHost(String host, int port) {
    static JumpHost parse(String text) {
      String value = text.trim();
      int colon = value.lastIndexOf(':');
      if (colon < 0) {
        return new JumpHost(value, DEFAULT_JUMP_PORT);
      }
      try {
        int port = Integer.parseInt(value.substring(colon + 1));
        if (port < 1 || port > 65535 || colon == 0) {
          throw new NumberFormatException();
        }
        return new JumpHost(value.substring(0, colon), port);
      } catch (NumberFormatException e) {
        throw UpgradeFailures.nonRetryable(
            UpgradeFailures.INVALID_REQUEST, "jump host must be host[:port], got '" + text + "'");
      }
    }
  }
}
