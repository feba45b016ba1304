package dev.inplace.sandbox.hosts;

import dev.inplace.workflows.api.NodeRole;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.security.KeyPair;
import java.security.PublicKey;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.apache.sshd.common.config.keys.KeyUtils;
import org.apache.sshd.common.file.virtualfs.VirtualFileSystemFactory;
import org.apache.sshd.common.keyprovider.KeyPairProvider;
import org.apache.sshd.server.SshServer;
import org.apache.sshd.server.session.ServerSession;
import org.apache.sshd.sftp.server.FileHandle;
import org.apache.sshd.sftp.server.SftpEventListener;
import org.apache.sshd.sftp.server.SftpSubsystemFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One simulated node: an SSH server (exec and SFTP) bound to the node's own loopback address,
 * serving the node's root directory: embedded MINA, or a real OpenSSH sshd ({@link OpenSshServer})
 * when one is given. Created and controlled by {@link SandboxHosts}.
 */
public final class SandboxHost {
  private static final Logger LOG = LoggerFactory.getLogger(SandboxHost.class);

  private final String name;
  private final NodeRole role;
  private final String service;
  private final String address;
  private final Path root;
  private final KeyPair hostKey;
  private final String user;
  private final PublicKey clientKey;
  private final Path sandboxBin;
  private final AtomicLong sftpBytesPerSecond = new AtomicLong();
  private final OpenSshServer openssh;
  private final SshFaults sshFaults;
  private final SshSessions sessions;
  private volatile int port;
  private volatile SshServer server;

  SandboxHost(
      String name,
      NodeRole role,
      String service,
      String address,
      Path root,
      KeyPair hostKey,
      String user,
      PublicKey clientKey,
      Path sandboxBin,
      OpenSshServer openssh,
      SshFaults sshFaults,
      SshSessions sessions) {
    this.name = name;
    this.role = role;
    this.service = service;
    this.address = address;
    this.root = root;
    this.hostKey = hostKey;
    this.user = user;
    this.clientKey = clientKey;
    this.sandboxBin = sandboxBin;
    this.openssh = openssh;
    this.sshFaults = sshFaults;
    this.sessions = sessions;
  }

  public String name() {
    return name;
  }

  public NodeRole role() {
    return role;
  }

  /** The k3s service unit of this node. */
  public String service() {
    return service;
  }

  /** The loopback address the SSH server binds, such as {@code 127.0.0.10}. */
  public String address() {
    return address;
  }

  /** The SSH port (0 before the first start). */
  public int port() {
    return port;
  }

  /** The node's root directory: SFTP's {@code /} and {@code INPLACE_HOST_ROOT} of every exec. */
  public Path root() {
    return root;
  }

  public boolean isUp() {
    if (openssh != null) {
      return openssh.isUp();
    }
    SshServer s = server;
    return s != null && s.isOpen();
  }

  /** This node's known_hosts line: {@code [127.0.0.N]:PORT ssh-ed25519 AAAA...}. */
  public String knownHostsLine() {
    String hostPattern = port == 22 ? address : "[" + address + "]:" + port;
    return hostPattern + " " + KeyFiles.publicKeyLine(hostKey.getPublic());
  }

  public SimulatedNode simulatedNode() {
    return new SimulatedNode(name, root, service, role);
  }

  /**
   * Starts the SSH server on {@code port} (0: any free port).
   *
   * @throws IOException if the port cannot be bound
   */
  synchronized void start(int requestedPort) throws IOException {
    if (isUp()) {
      return;
    }
    if (openssh != null) {
      openssh.start(requestedPort);
      port = openssh.port();
      return;
    }
    SshServer s = SshServer.setUpDefaultServer();
    s.setHost(address);
    s.setPort(requestedPort);
    s.setKeyPairProvider(KeyPairProvider.wrap(hostKey));
    s.setPasswordAuthenticator(null);
    s.setKeyboardInteractiveAuthenticator(null);
    s.setPublickeyAuthenticator(this::authorized);
    SftpSubsystemFactory sftp = new SftpSubsystemFactory();
    sftp.addSftpEventListener(new Throttle());
    s.setSubsystemFactories(List.of(sftp));
    s.setFileSystemFactory(new VirtualFileSystemFactory(root));
    HostExecContext context = new HostExecContext(name, root, sandboxBin, user);
    s.setCommandFactory((channel, command) -> new HostCommand(command, context, sshFaults));
    s.addSessionListener(new org.apache.sshd.common.session.SessionListener() {
      @Override
      public void sessionCreated(org.apache.sshd.common.session.Session session) {
        sessions.opened();
      }
    });
    try {
      s.start();
    } catch (IOException | RuntimeException e) {
      stopNow(s);
      throw e instanceof IOException io ? io : new IOException(e);
    }
    server = s;
    port = s.getPort();
    LOG.info("node {}: SSH server up on {}:{}", name, address, port);
  }

  /** Stops the SSH server, cutting every open session. */
  synchronized void stop() {
    if (openssh != null) {
      openssh.stop();
      LOG.info("node {}: SSH server down", name);
      return;
    }
    SshServer s = server;
    server = null;
    if (s != null) {
      stopNow(s);
      LOG.info("node {}: SSH server down", name);
    }
  }

  /** Limits SFTP writes to about {@code bytesPerSecond}; 0 removes the limit. */
  void throttleSftpWrites(long bytesPerSecond) {
    if (bytesPerSecond < 0) {
      throw new IllegalArgumentException("bytesPerSecond must be >= 0");
    }
    if (openssh != null && bytesPerSecond > 0) {
      throw new IllegalStateException("a slow link needs --hosts mina (sshd has no write throttle)");
    }
    sftpBytesPerSecond.set(bytesPerSecond);
  }

  private boolean authorized(String username, PublicKey key, ServerSession session) {
    return user.equals(username) && KeyUtils.compareKeys(clientKey, key);
  }

  private static void stopNow(SshServer s) {
    try {
      s.stop(true);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot stop SSH server", e);
    }
  }

  /**
   * A slow link: each SFTP write waits as long as the configured rate says it should take. A dropped
   * upload (SshFaults) loses its connection after one of its first writes.
   */
  private final class Throttle implements SftpEventListener {
    private final java.util.Map<String, Integer> dropAfterWrites = new java.util.concurrent.ConcurrentHashMap<>();

    @Override
    public void open(ServerSession session, String remoteHandle, org.apache.sshd.sftp.server.Handle localHandle) {
      if (localHandle instanceof FileHandle) {
        int writes = sshFaults.nextUploadDropAfterWrites();
        if (writes > 0) {
          dropAfterWrites.put(remoteHandle, writes);
        }
      }
    }

    @Override
    public void closed(ServerSession session, String remoteHandle, org.apache.sshd.sftp.server.Handle localHandle, Throwable thrown) {
      dropAfterWrites.remove(remoteHandle);
    }

    @Override
    public void writing(
        ServerSession session,
        String remoteHandle,
        FileHandle localHandle,
        long offset,
        byte[] data,
        int dataOffset,
        int dataLen)
        throws IOException {
      Integer left = dropAfterWrites.computeIfPresent(remoteHandle, (h, n) -> n - 1);
      if (left != null && left <= 0) {
        dropAfterWrites.remove(remoteHandle);
        sshFaults.countDrop();
        LOG.info("node {}: SSH fault: dropping the connection mid-upload", name);
        session.close(true);
        throw new IOException("sandbox: connection dropped mid-upload");
      }
      long rate = sftpBytesPerSecond.get();
      if (rate <= 0) {
        return;
      }
      try {
        TimeUnit.NANOSECONDS.sleep(dataLen * 1_000_000_000L / rate);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new java.io.InterruptedIOException("slow link interrupted");
      }
    }
  }
}
