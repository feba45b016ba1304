package dev.inplace.sandbox.hosts;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import net.schmizz.sshj.DefaultConfig;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.common.SecurityUtils;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.sftp.SFTPClient;
import net.schmizz.sshj.transport.verification.OpenSSHKnownHosts;
import net.schmizz.sshj.userauth.keyprovider.KeyProvider;

/**
 * A real sshj client configured the way the product is: BouncyCastle not registered, host keys
 * pinned from known_hosts text, key loaded from OpenSSH text.
 */
final class SshTestClient implements AutoCloseable {
  static {
    SecurityUtils.setRegisterBouncyCastle(false);
    SecurityUtils.setSecurityProvider(null);
  }

  record Result(int exit, String stdout, String stderr) {}

  private final SSHClient ssh;

  private SshTestClient(SSHClient ssh) {
    this.ssh = ssh;
  }

  /** Loads the estate's client key the way the product does, from text. */
  static KeyProvider loadClientKey(SandboxHosts hosts) throws IOException {
    try (SSHClient ssh = new SSHClient(new DefaultConfig())) {
      return ssh.loadKeys(hosts.clientPrivateKey(), null, null);
    }
  }

  static SshTestClient connect(SandboxHosts hosts, String node, String knownHosts)
      throws IOException {
    SandboxHost host = hosts.host(node);
    SSHClient ssh = new SSHClient(new DefaultConfig());
    try {
      ssh.addHostKeyVerifier(new OpenSSHKnownHosts(new StringReader(knownHosts)));
      ssh.setConnectTimeout(5_000);
      ssh.connect(host.address(), host.port());
      KeyProvider key = ssh.loadKeys(hosts.clientPrivateKey(), null, null);
      ssh.authPublickey(hosts.user(), key);
      return new SshTestClient(ssh);
    } catch (IOException | RuntimeException e) {
      ssh.close();
      throw e;
    }
  }

  static SshTestClient connect(SandboxHosts hosts, String node) throws IOException {
    return connect(hosts, node, hosts.knownHosts());
  }

  Result exec(String command, String stdin) throws IOException {
    try (Session session = ssh.startSession()) {
      Session.Command cmd = session.exec(command);
      try (OutputStream in = cmd.getOutputStream()) {
        if (stdin != null) {
          in.write(stdin.getBytes(StandardCharsets.UTF_8));
        }
      }
      ByteArrayOutputStream err = new ByteArrayOutputStream();
      Thread errReader = new Thread(() -> copy(cmd.getErrorStream(), err));
      errReader.start();
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      copy(cmd.getInputStream(), out);
      try {
        errReader.join(30_000);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException(e);
      }
      cmd.join(30, TimeUnit.SECONDS);
      Integer exit = cmd.getExitStatus();
      return new Result(
          exit == null ? -1 : exit,
          out.toString(StandardCharsets.UTF_8),
          err.toString(StandardCharsets.UTF_8));
    }
  }

  /**
   * Runs {@code script} the way the product's activities do: on stdin of {@code sudo -n bash -s}.
   */
  Result script(String step, String body) throws IOException {
    return exec(
        "sudo -n bash -s",
        "#!/bin/bash\n# inplace-step: "
            + step
            + "\nset -eu\nroot=\"${INPLACE_HOST_ROOT:-}\"\n"
            + body
            + "\n");
  }

  void upload(Path local, String remote) throws IOException {
    try (SFTPClient sftp = ssh.newSFTPClient()) {
      String parent = remote.substring(0, remote.lastIndexOf('/'));
      sftp.mkdirs(parent);
      sftp.put(local.toString(), remote);
    }
  }

  private static void copy(InputStream from, OutputStream to) {
    try {
      from.transferTo(to);
    } catch (IOException e) {
      // the command's streams close with the channel
    }
  }

  @Override
  public void close() throws IOException {
    ssh.close();
  }
}
