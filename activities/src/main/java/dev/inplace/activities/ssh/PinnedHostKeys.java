package dev.inplace.activities.ssh;

import java.io.IOException;
import java.io.StringReader;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.PublicKey;
import java.util.Base64;
import net.schmizz.sshj.common.Buffer;
import net.schmizz.sshj.common.KeyType;
import net.schmizz.sshj.transport.verification.OpenSSHKnownHosts;

/**
 * Host keys pinned from OpenSSH known_hosts text held in memory. Refuses every key it does not list
 * and remembers why, so the caller can say whether the host was unknown or offered another key.
 */
final class PinnedHostKeys extends OpenSSHKnownHosts {

  /** Why the last key was refused. */
  record Rejection(String host, String keyType, String fingerprint, boolean hostKnown) {
    String describe() {
      return hostKnown
          ? "host key of "
              + host
              + " does not match the pinned key: it offered "
              + keyType
              + " "
              + fingerprint
          : "no pinned host key for "
              + host
              + " in known_hosts: it offered "
              + keyType
              + " "
              + fingerprint;
    }
  }

  private volatile Rejection rejection;

  private PinnedHostKeys(String knownHosts) throws IOException {
    super(new StringReader(knownHosts));
  }

  static PinnedHostKeys parse(byte[] knownHosts) throws IOException {
    String text = new String(knownHosts, StandardCharsets.UTF_8);
    PinnedHostKeys keys = new PinnedHostKeys(text);
    // sshj skips lines it cannot read: a pin set with holes, or none at all, is refused before connecting.
    long lines = text.lines().map(String::trim).filter(l -> !l.isEmpty() && !l.startsWith("#")).count();
    long usable = keys.entries().stream()
        .filter(e -> !(e instanceof CommentEntry) && !(e instanceof BadHostEntry))
        .count();
    if (usable == 0) {
      throw new IOException("it pins no readable host key");
    }
    if (usable < lines) {
      throw new IOException((lines - usable) + " of its " + lines + " entries cannot be read");
    }
    return keys;
  }

  Rejection rejection() {
    return rejection;
  }

  @Override
  protected boolean hostKeyUnverifiableAction(String host, PublicKey key) {
    rejection = new Rejection(host, KeyType.fromKey(key).toString(), fingerprint(key), false);
    return false;
  }

  @Override
  protected boolean hostKeyChangedAction(String host, PublicKey key) {
    rejection = new Rejection(host, KeyType.fromKey(key).toString(), fingerprint(key), true);
    return false;
  }

  /** The OpenSSH {@code SHA256:} fingerprint, as {@code ssh-keygen -lf} prints it. */
  static String fingerprint(PublicKey key) {
    byte[] blob = new Buffer.PlainBuffer().putPublicKey(key).getCompactData();
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(blob);
      return "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is a mandatory JCE algorithm", e);
    }
  }
}
