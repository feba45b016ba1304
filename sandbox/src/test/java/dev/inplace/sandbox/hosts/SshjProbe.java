package dev.inplace.sandbox.hosts;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.Security;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.common.SecurityUtils;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.transport.TransportException;
import net.schmizz.sshj.transport.verification.OpenSSHKnownHosts;

/**
 * Runs in a JVM of its own, where Apache MINA never registers BouncyCastle: connects to a sandbox
 * host with sshj configured as the product is (BouncyCastle not registered, no chacha20), the key
 * loaded from OpenSSH text and host keys pinned from a known_hosts file, then runs one command.
 *
 * <p>Arguments: address port user privateKeyFile knownHostsFile command. Exit status: the
 * command's, 3 if BouncyCastle is registered, 4 if the host key is refused.
 */
public final class SshjProbe {
  private SshjProbe() {}

  public static void main(String[] args) throws Exception {
    SecurityUtils.setRegisterBouncyCastle(false);
    SecurityUtils.setSecurityProvider(null);
    DefaultConfig config = new DefaultConfig();
    config.setCipherFactories(
        config.getCipherFactories().stream()
            .filter(f -> !f.getName().startsWith("chacha20"))
            .toList());
    try (SSHClient ssh = new SSHClient(config)) {
      ssh.addHostKeyVerifier(new OpenSSHKnownHosts(new File(args[4])));
      ssh.setConnectTimeout(5_000);
      try {
        ssh.connect(args[0], Integer.parseInt(args[1]));
      } catch (TransportException e) {
        System.err.println("refused: " + e.getDisconnectReason());
        System.exit(4);
      }
      String key = Files.readString(Path.of(args[3]), StandardCharsets.US_ASCII);
      ssh.authPublickey(args[2], ssh.loadKeys(key, null, null));
      if (Security.getProvider("BC") != null) {
        System.err.println("BouncyCastle is registered");
        System.exit(3);
      }
      try (Session session = ssh.startSession()) {
        Session.Command command = session.exec(args[5]);
        command.getOutputStream().close();
        System.out.print(
            new String(command.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        command.join(30, TimeUnit.SECONDS);
        System.exit(command.getExitStatus());
      }
    }
  }
}
