package dev.inplace.activities.ssh;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.function.LongSupplier;
import net.schmizz.sshj.SSHClient;

/**
 * Authenticated connections no step is using, kept for the next step on the same host so a node's
 * steps on one worker share one SSH connection instead of paying a handshake each. An entry is
 * keyed by the host, the user and a digest of the Secrets it was opened with: a rotated key or
 * known_hosts never reuses a connection opened under the old one. Entries expire after the idle
 * time; a connection that broke is never put back.
 */
final class IdleConnections {
  private static final int PER_HOST = 4;

  /** Who a connection is to, and under which Secrets (as a digest, never the bytes). */
  record Key(String address, int port, String user, String jumpHost, String secretsDigest) {
    static Key of(String address, int port, String user, String jumpHost, byte[] knownHosts, byte[] privateKey) {
      try {
        MessageDigest digest = MessageDigest.getInstance("SHA-256");
        digest.update(knownHosts);
        digest.update((byte) 0);
        digest.update(privateKey);
        return new Key(address, port, user, jumpHost == null ? "" : jumpHost, HexFormat.of().formatHex(digest.digest()));
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException(e);
      }
    }
  }

  /** A connection to a host, and the jump host connection it runs through (or null). */
  record Link(SSHClient client, SSHClient jump) {
    boolean usable() {
      return client.isConnected()
          && client.isAuthenticated()
          && (jump == null || (jump.isConnected() && jump.isAuthenticated()));
    }

    void close() {
      SshConnector.closeQuietly(client);
      SshConnector.closeQuietly(jump);
    }
  }

  private record Idle(Link link, long since) {}

  private final long ttlNanos;
  private final LongSupplier clock;
  private final Map<Key, Deque<Idle>> idle = new HashMap<>();

  IdleConnections(Duration ttl, LongSupplier clock) {
    this.ttlNanos = ttl.toNanos();
    this.clock = clock;
  }

  /** A usable idle connection for {@code key}, or null; expired or dead ones are closed. */
  Link take(Key key) {
    List<Link> stale = new ArrayList<>();
    Link found = null;
    synchronized (this) {
      Deque<Idle> links = idle.get(key);
      while (links != null && !links.isEmpty() && found == null) {
        Idle candidate = links.pollLast(); // the most recently used is the most likely alive
        if (clock.getAsLong() - candidate.since() < ttlNanos && candidate.link().usable()) {
          found = candidate.link();
        } else {
          stale.add(candidate.link());
        }
      }
      if (links != null && links.isEmpty()) {
        idle.remove(key);
      }
    }
    stale.forEach(Link::close);
    return found;
  }

  /** Keeps {@code link} for the next step on the same host, if it is still usable. */
  void put(Key key, Link link) {
    if (ttlNanos <= 0 || !link.usable()) {
      link.close();
      return;
    }
    Link evicted = null;
    synchronized (this) {
      Deque<Idle> links = idle.computeIfAbsent(key, k -> new ArrayDeque<>());
      links.addLast(new Idle(link, clock.getAsLong()));
      if (links.size() > PER_HOST) {
        evicted = links.pollFirst().link();
      }
    }
    if (evicted != null) {
      evicted.close();
    }
  }

  /** Closes every connection idle for longer than the idle time. */
  void expire() {
    List<Link> stale = new ArrayList<>();
    synchronized (this) {
      long now = clock.getAsLong();
      idle.values().forEach(
          links -> links.removeIf(
              i -> {
                boolean old = now - i.since() >= ttlNanos;
                if (old) {
                  stale.add(i.link());
                }
                return old;
              }));
      idle.values().removeIf(Deque::isEmpty);
    }
    stale.forEach(Link::close);
  }

  /** Closes every idle connection. */
  void closeAll() {
    List<Link> all = new ArrayList<>();
    synchronized (this) {
      idle.values().forEach(links -> links.forEach(i -> all.add(i.link())));
      idle.clear();
    }
    all.forEach(Link::close);
  }

  synchronized int size() {
    return idle.values().stream().mapToInt(Deque::size).sum();
  }
}
