package dev.inplace.activities.ssh;

import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.channels.FileChannel;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.util.EnumSet;
import java.util.Set;
import java.util.function.LongConsumer;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.connection.channel.direct.Session;
import net.schmizz.sshj.sftp.OpenMode;
import net.schmizz.sshj.sftp.RemoteFile;
import net.schmizz.sshj.sftp.SFTPClient;

/**
 * An authenticated SSH connection to one host (through its jump host, if any), for one activity.
 * Closing it hands the connection back to the connector for the host's next step unless it broke.
 * On a reused connection that died meanwhile (host rebooted, sshd restarted), opening a session or
 * SFTP reconnects once, before anything has run, so reuse never turns into a failed step. The uploads
 * of one activity share one SFTP session (one {@code sftp-server} on the host), closed with it.
 */
public final class HostConnection implements AutoCloseable {
  /** Opens a fresh connection to the same host, with the same Secrets. */
  interface Reconnect {
    IdleConnections.Link connect();
  }

  /** Takes the connection back when the activity is done with it. */
  interface Release {
    void release(IdleConnections.Link link, boolean reusable);
  }

  /**
   * Bytes of SFTP writes in flight before an upload waits for acknowledgements: OpenSSH's session
   * window (2 MiB), so the link is never idle waiting for replies. With a server's usual 32 KiB
   * packets that is 64 writes; sshj's own transfer keeps 16 (512 KiB), which held a loopback upload
   * to a third of its rate (docs/benchmarks.md, "SFTP writes in flight").
   */
  static final int BYTES_IN_FLIGHT = 2 << 20;

  /** Never fewer writes in flight than sshj's own transfer keeps. */
  static final int MIN_WRITES_IN_FLIGHT = 16;

  private final HostAccess host;
  private final RemoteShell shell;
  private final Reconnect reconnect;
  private final Release release;
  private IdleConnections.Link link;
  private boolean reused;
  private boolean broken;
  private SFTPClient sftp;

  HostConnection(
      HostAccess host,
      IdleConnections.Link link,
      boolean reused,
      ScriptDeadline deadline,
      java.time.Duration silenceLimit,
      Reconnect reconnect,
      Release release) {
    this.host = host;
    this.link = link;
    this.reused = reused;
    this.reconnect = reconnect;
    this.release = release;
    this.shell = new RemoteShell(this::startSession, label(host), host.ssh().needsSudo(), deadline, silenceLimit);
  }

  /** Whether this connection was opened by an earlier step and kept (for tests and logs). */
  public boolean reused() {
    return reused;
  }

  /** "node (address:port)", for messages. */
  public static String label(HostAccess host) {
    return host.nodeName() + " (" + host.address() + ":" + host.ssh().port() + ")";
  }

  /**
   * Runs a script; a non-zero exit fails with {@code failureType}, a broken connection with {@code
   * HostUnreachable}.
   */
  public ScriptOutput run(RemoteScript script, String failureType) {
    return run(script, failureType, null);
  }

  /**
   * As {@link #run(RemoteScript, String)}, with the script bounded by {@code cap} when that is
   * shorter than what is left of the step's budget: for a short script inside a long activity (the
   * staging checks between uploads), whose budget is the uploads', not the script's.
   */
  public ScriptOutput run(RemoteScript script, String failureType, java.time.Duration cap) {
    try {
      return shell.run(script, failureType, cap);
    } catch (ApplicationFailure e) {
      if (UpgradeFailures.HOST_UNREACHABLE.equals(e.getType())) {
        broken = true;
      }
      throw e;
    }
  }

  private Session startSession() throws IOException {
    try {
      return client().startSession();
    } catch (IOException | IllegalStateException e) {
      if (!reused) {
        throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
      }
      replaceDeadLink();
      return client().startSession();
    }
  }

  /** The activity's SFTP session: opened by its first upload, kept for the next. */
  private SFTPClient sftp() throws IOException {
    if (sftp == null) {
      sftp = newSftp();
    }
    return sftp;
  }

  private SFTPClient newSftp() throws IOException {
    try {
      return client().newSFTPClient();
    } catch (IOException | IllegalStateException e) {
      if (!reused) {
        throw e instanceof IOException io ? io : new IOException(e.getMessage(), e);
      }
      replaceDeadLink();
      return client().newSFTPClient();
    }
  }

  /** The kept connection died while idle: open a fresh one (its failure is the caller's). */
  private void replaceDeadLink() {
    link.close();
    reused = false;
    link = reconnect.connect();
  }

  private SSHClient client() {
    return link.client();
  }

  /**
   * Uploads a local file over SFTP as the login user into {@code remotePath}, from byte {@code
   * offset} on: the bytes before it must already be there (the caller checked their digest). The
   * remote file ends up exactly as long as the local one.
   *
   * @param progress called with the bytes of this file sent so far by this call
   * @return the bytes sent
   */
  public long upload(Path local, String remotePath, long offset, LongConsumer progress) {
    // Closed by hand, not with try-with-resources: after a dropped connection sshj throws the same
    // exception instance from write and close, which try-with-resources cannot suppress into itself.
    RemoteFile remote = null;
    OutputStream out = null;
    try (FileChannel in = FileChannel.open(local, StandardOpenOption.READ)) {
      long size = in.size();
      if (offset < 0 || offset > size) {
        throw new IllegalArgumentException("offset " + offset + " outside 0.." + size);
      }
      Set<OpenMode> modes =
          offset == 0
              ? EnumSet.of(OpenMode.WRITE, OpenMode.CREAT, OpenMode.TRUNC)
              : EnumSet.of(OpenMode.WRITE, OpenMode.CREAT);
      SFTPClient session = sftp();
      remote = session.open(remotePath, modes);
      int chunk =
          session.getSFTPEngine().getSubsystem().getRemoteMaxPacketSize()
              - remote.getOutgoingPacketOverhead();
      ByteBuffer buffer = ByteBuffer.allocate(Math.max(4096, Math.min(chunk, 256 * 1024)));
      in.position(offset);
      out = remote.new RemoteFileOutputStream(offset, writesInFlight(buffer.capacity()));
      long sent = 0;
      int n;
      while ((n = in.read(buffer.clear())) > 0) {
        out.write(buffer.array(), 0, n);
        sent += n;
        progress.accept(sent);
      }
      out.close(); // waits for every write to be acknowledged
      out = null;
      if (offset > 0) {
        remote.setLength(size); // a partial longer than its digest said loses its tail
      }
      remote.close();
      remote = null;
      progress.accept(sent);
      return sent;
    } catch (IOException e) {
      broken = true;
      throw SshFailures.unreachable(label(host) + " (upload to " + remotePath + ")", e);
    } finally {
      closeQuietly(out);
      closeQuietly(remote);
      if (broken) {
        closeSftp(); // a failed session is never used again
      }
    }
  }

  /** How many writes of {@code chunk} bytes an upload keeps unacknowledged ({@link #BYTES_IN_FLIGHT}). */
  static int writesInFlight(int chunk) {
    if (chunk <= 0) {
      throw new IllegalArgumentException("chunk must be > 0, got " + chunk);
    }
    return Math.max(MIN_WRITES_IN_FLIGHT, (BYTES_IN_FLIGHT + chunk - 1) / chunk);
  }

  private void closeSftp() {
    closeQuietly(sftp);
    sftp = null;
  }

  private static void closeQuietly(AutoCloseable closeable) {
    if (closeable == null) {
      return;
    }
    try {
      closeable.close();
    } catch (Exception ignored) {
      // Already failing (or done): the first failure is the one reported.
    }
  }

  @Override
  public void close() {
    closeSftp();
    release.release(link, !broken);
  }
}
