package dev.inplace.activities.ssh;

import dev.inplace.workflows.api.HostAccess;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.function.LongConsumer;
import net.schmizz.sshj.SSHClient;
import net.schmizz.sshj.common.StreamCopier;
import net.schmizz.sshj.sftp.SFTPClient;
import net.schmizz.sshj.sftp.SFTPFileTransfer;
import net.schmizz.sshj.xfer.FileSystemFile;
import net.schmizz.sshj.xfer.TransferListener;

/** An authenticated SSH connection to one host (through its jump host, if any). */
public final class HostConnection implements AutoCloseable {
  private final HostAccess host;
  private final SSHClient client;
  private final SSHClient jump;
  private final RemoteShell shell;

  HostConnection(HostAccess host, SSHClient client, SSHClient jump, Duration commandTimeout) {
    this.host = host;
    this.client = client;
    this.jump = jump;
    this.shell = new RemoteShell(client, label(host), host.ssh().needsSudo(), commandTimeout);
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
    return shell.run(script, failureType);
  }

  /**
   * Uploads a local file over SFTP as the login user, replacing {@code remotePath}.
   *
   * @param progress called with the bytes of this file sent so far
   * @return the bytes sent
   */
  public long upload(Path local, String remotePath, LongConsumer progress) {
    try (SFTPClient sftp = client.newSFTPClient()) {
      SFTPFileTransfer transfer = sftp.getFileTransfer();
      transfer.setPreserveAttributes(false);
      transfer.setTransferListener(new ProgressListener(progress));
      transfer.upload(new FileSystemFile(local.toFile()), remotePath);
      long size = Files.size(local);
      progress.accept(size);
      return size;
    } catch (IOException e) {
      throw SshFailures.unreachable(label(host) + " (upload to " + remotePath + ")", e);
    }
  }

  @Override
  public void close() {
    SshConnector.closeQuietly(client);
    SshConnector.closeQuietly(jump);
  }

  private record ProgressListener(LongConsumer progress) implements TransferListener {
    @Override
    public TransferListener directory(String name) {
      return this;
    }

    @Override
    public StreamCopier.Listener file(String name, long size) {
      return progress::accept;
    }
  }
}
