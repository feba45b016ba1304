package dev.inplace.activities.ssh;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.KeyPair;
import java.security.PublicKey;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import org.apache.sshd.common.config.keys.KeyUtils;
import org.apache.sshd.common.file.virtualfs.VirtualFileSystemFactory;
import org.apache.sshd.common.keyprovider.KeyPairProvider;
import org.apache.sshd.common.session.Session;
import org.apache.sshd.common.session.SessionListener;
import org.apache.sshd.server.Environment;
import org.apache.sshd.server.ExitCallback;
import org.apache.sshd.server.SshServer;
import org.apache.sshd.server.channel.ChannelSession;
import org.apache.sshd.server.command.Command;
import org.apache.sshd.server.forward.AcceptAllForwardingFilter;
import org.apache.sshd.server.session.ServerSession;
import org.apache.sshd.sftp.server.FileHandle;
import org.apache.sshd.sftp.server.Handle;
import org.apache.sshd.sftp.server.SftpEventListener;
import org.apache.sshd.sftp.server.SftpSubsystemFactory;

/**
 * A simulated node for tests: an SSH server on 127.0.0.1 with a generated host key, public-key auth
 * for one client key, SFTP rooted at the node root and exec commands run by {@code bash -c} on this
 * machine with {@code INPLACE_HOST_ROOT} set to the node root and test fakes first on the PATH.
 */
public final class TestSshServer implements AutoCloseable {
  private final SshServer server;
  private final KeyPair hostKey;
  private final List<String> commands = new CopyOnWriteArrayList<>();
  private final AtomicBoolean corruptNextUpload = new AtomicBoolean();
  private final AtomicLong uploadedBytes = new AtomicLong();
  private final AtomicLong sessionsOpened = new AtomicLong();
  private final AtomicLong sftpSessions = new AtomicLong();
  private final AtomicLong dropAfterBytes = new AtomicLong(-1);

  private TestSshServer(
      Path nodeRoot, Path fakeBin, PublicKey clientKey, KeyPair hostKey, Consumer<SshServer> tune)
      throws IOException {
    this.hostKey = hostKey;
    server = SshServer.setUpDefaultServer();
    server.setHost("127.0.0.1");
    server.setPort(0);
    server.setKeyPairProvider(KeyPairProvider.wrap(hostKey));
    server.setPasswordAuthenticator(null);
    server.setKeyboardInteractiveAuthenticator(null);
    server.setPublickeyAuthenticator((user, key, session) -> KeyUtils.compareKeys(key, clientKey));
    server.setForwardingFilter(AcceptAllForwardingFilter.INSTANCE); // lets it act as a jump host
    server.setFileSystemFactory(new VirtualFileSystemFactory(nodeRoot));
    SftpSubsystemFactory sftp = new SftpSubsystemFactory();
    sftp.addSftpEventListener(new Corrupter());
    server.setSubsystemFactories(List.of(sftp));
    server.setCommandFactory(
        (channel, command) -> {
          commands.add(command);
          return new BashCommand(command, nodeRoot, fakeBin);
        });
    server.addSessionListener(
        new SessionListener() {
          @Override
          public void sessionCreated(Session session) {
            sessionsOpened.incrementAndGet();
          }
        });
    tune.accept(server);
    server.start();
  }

  public static TestSshServer start(Path nodeRoot, Path fakeBin, PublicKey clientKey)
      throws IOException {
    return new TestSshServer(nodeRoot, fakeBin, clientKey, TestKeys.generate(), s -> {});
  }

  /** A server with its own host key and {@code tune} applied (algorithms, say) before it starts. */
  public static TestSshServer start(
      Path nodeRoot, Path fakeBin, PublicKey clientKey, KeyPair hostKey, Consumer<SshServer> tune)
      throws IOException {
    return new TestSshServer(nodeRoot, fakeBin, clientKey, hostKey, tune);
  }

  public int port() {
    return server.getPort();
  }

  public PublicKey hostKey() {
    return hostKey.getPublic();
  }

  /** The known_hosts line pinning this server's key for 127.0.0.1 on its port. */
  public String knownHostsLine() {
    return "[127.0.0.1]:" + port() + " " + TestKeys.publicKeyEntry(hostKey());
  }

  /** Exec commands received so far. */
  public List<String> commands() {
    return List.copyOf(commands);
  }

  /** The next file written over SFTP gets a stray byte appended once it is closed. */
  public void corruptNextUpload() {
    corruptNextUpload.set(true);
  }

  /** SSH connections accepted so far. */
  public long sessionsOpened() {
    return sessionsOpened.get();
  }

  /** SFTP subsystems started so far (each is an {@code sftp-server} process on an OpenSSH host). */
  public long sftpSessions() {
    return sftpSessions.get();
  }

  /** Cuts every open connection, as a host reboot or an sshd restart would. */
  public void closeAllConnections() {
    server.getActiveSessions().forEach(s -> s.close(true));
  }

  /** Bytes written over SFTP so far. */
  public long uploadedBytes() {
    return uploadedBytes.get();
  }

  /** Drops the SSH connection once {@code bytes} more bytes are written over SFTP (once). */
  public void dropConnectionAfterUploadedBytes(long bytes) {
    dropAfterBytes.set(uploadedBytes.get() + bytes);
  }

  @Override
  public void close() throws IOException {
    server.stop(true);
  }

  private final class Corrupter implements SftpEventListener {
    @Override
    public void initialized(ServerSession session, int version) {
      sftpSessions.incrementAndGet();
    }

    @Override
    public void written(
        ServerSession session,
        String remoteHandle,
        FileHandle localHandle,
        long offset,
        byte[] data,
        int dataOffset,
        int dataLen,
        Throwable thrown)
        throws IOException {
      long total = uploadedBytes.addAndGet(dataLen);
      long limit = dropAfterBytes.get();
      if (limit >= 0 && total >= limit && dropAfterBytes.compareAndSet(limit, -1)) {
        session.close(true); // as if the network or the worker went away mid-file
      }
    }

    @Override
    public void closed(
        ServerSession session, String remoteHandle, Handle localHandle, Throwable thrown)
        throws IOException {
      if (localHandle instanceof FileHandle && corruptNextUpload.compareAndSet(true, false)) {
        Files.write(localHandle.getFile(), new byte[] {'!'}, StandardOpenOption.APPEND);
      }
    }
  }

  /** Runs the exec request with bash, streaming stdin, stdout and stderr. */
  private static final class BashCommand implements Command {
    private final String command;
    private final Path nodeRoot;
    private final Path fakeBin;
    private InputStream in;
    private OutputStream out;
    private OutputStream err;
    private ExitCallback exit;
    private Process process;

    BashCommand(String command, Path nodeRoot, Path fakeBin) {
      this.command = command;
      this.nodeRoot = nodeRoot;
      this.fakeBin = fakeBin;
    }

    @Override
    public void setInputStream(InputStream in) {
      this.in = in;
    }

    @Override
    public void setOutputStream(OutputStream out) {
      this.out = out;
    }

    @Override
    public void setErrorStream(OutputStream err) {
      this.err = err;
    }

    @Override
    public void setExitCallback(ExitCallback exit) {
      this.exit = exit;
    }

    @Override
    public void start(ChannelSession channel, Environment env) throws IOException {
      ProcessBuilder builder = new ProcessBuilder("bash", "-c", command);
      builder.environment().put("INPLACE_HOST_ROOT", nodeRoot.toString());
      builder.environment().put("PATH", fakeBin + ":" + System.getenv("PATH"));
      process = builder.start();
      Thread stdin = copy(in, process.getOutputStream(), true, "stdin");
      Thread stdout = copy(process.getInputStream(), out, false, "stdout");
      Thread stderr = copy(process.getErrorStream(), err, false, "stderr");
      Thread waiter =
          new Thread(
              () -> {
                try {
                  int code = process.waitFor();
                  stdout.join();
                  stderr.join();
                  stdin.interrupt();
                  exit.onExit(code);
                } catch (InterruptedException e) {
                  Thread.currentThread().interrupt();
                }
              },
              "test-sshd-exit");
      waiter.setDaemon(true);
      waiter.start();
    }

    @Override
    public void destroy(ChannelSession channel) {
      if (process != null) {
        process.destroyForcibly();
      }
    }

    private static Thread copy(
        InputStream from, OutputStream to, boolean closeTarget, String name) {
      Thread t =
          new Thread(
              () -> {
                byte[] buffer = new byte[8192];
                try {
                  int n;
                  while ((n = from.read(buffer)) != -1) {
                    to.write(buffer, 0, n);
                    to.flush();
                  }
                } catch (IOException e) {
                  // The other side went away; the exit status still reports the outcome.
                } finally {
                  if (closeTarget) {
                    try {
                      to.close();
                    } catch (IOException ignored) {
                      // nothing to do
                    }
                  }
                }
              },
              "test-sshd-" + name);
      t.setDaemon(true);
      t.start();
      return t;
    }
  }

  /** Writes the fake {@code sudo} and {@code systemctl} into {@code dir} and returns it. */
  public static Path writeFakes(Path dir) throws IOException {
    Files.createDirectories(dir);
    write(
        dir.resolve("sudo"),
        """
        #!/bin/bash
        # Test fake: records the call, then runs the command (no password, like sudo -n).
        if [ "${1:-}" = "-n" ]; then shift; fi
        mkdir -p "$INPLACE_HOST_ROOT/run"
        echo "$*" >> "$INPLACE_HOST_ROOT/run/sudo.log"
        exec "$@"
        """);
    write(
        dir.resolve("systemctl"),
        """
        #!/bin/bash
        # Test fake: unit state lives in files under $INPLACE_HOST_ROOT/run/systemd.
        # <unit>.active marks a running unit; <unit>.fail-restart makes restart fail;
        # <unit>.hang-restart makes restart hang for a minute.
        state="$INPLACE_HOST_ROOT/run/systemd"
        mkdir -p "$state"
        cmd="$1"; shift
        case "$cmd" in
          daemon-reload)
            touch "$state/daemon-reload"
            ;;
          restart)
            if [ -e "$state/$1.hang-restart" ]; then sleep 60; fi
            if [ -e "$state/$1.fail-restart" ]; then
              rm -f "$state/$1.active"
              echo "Job for $1.service failed because the control process exited with error code." >&2
              exit 1
            fi
            echo x >> "$state/$1.restarts"
            touch "$state/$1.active"
            ;;
          is-active)
            if [ -e "$state/$1.active" ]; then echo active; else echo inactive; exit 3; fi
            ;;
          status)
            if [ -e "$state/$1.active" ]; then echo "$1 active"; else echo "$1 failed"; exit 3; fi
            ;;
          *)
            echo "fake systemctl: unsupported command $cmd" >&2
            exit 1
            ;;
        esac
        """);
    return dir;
  }

  private static void write(Path file, String text) throws IOException {
    Files.writeString(file, text, StandardCharsets.UTF_8);
    file.toFile().setExecutable(true);
  }
}
