package dev.inplace.starter;

import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;
import java.util.Optional;
import java.util.Set;

/**
 * One SSH host public key as OpenSSH writes it: its type ({@code ssh-ed25519}, {@code
 * ecdsa-sha2-nistp256}, ...) and the base64 of its wire blob.
 */
record HostKey(String type, String base64) {
  /** The key types inplace reads and pins (the product's host key algorithms; ssh-rsa is the RSA key format). */
  static final Set<String> TYPES =
      Set.of("ssh-ed25519", "ecdsa-sha2-nistp256", "ecdsa-sha2-nistp384", "ecdsa-sha2-nistp521", "ssh-rsa");

  HostKey {
    if (!TYPES.contains(type)) {
      throw new IllegalArgumentException("host key type must be one of " + TYPES + ", got '" + type + "'");
    }
    if (base64 == null || !base64.matches("[A-Za-z0-9+/]+={0,2}")) {
      throw new IllegalArgumentException("host key of type " + type + " is not base64");
    }
    Base64.getDecoder().decode(base64); // throws on a malformed length
  }

  /** {@code TYPE BASE64 [comment]}, as a {@code .pub} file or a published line holds it; the comment is dropped. */
  static Optional<HostKey> parse(String line) {
    String[] fields = line.trim().split("\\s+");
    if (fields.length < 2) {
      return Optional.empty();
    }
    try {
      return Optional.of(new HostKey(fields[0], fields[1]));
    } catch (IllegalArgumentException e) {
      return Optional.empty();
    }
  }

  /** The OpenSSH {@code SHA256:} fingerprint, as {@code ssh-keygen -lf} prints it. */
  String fingerprint() {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(Base64.getDecoder().decode(base64));
      return "SHA256:" + Base64.getEncoder().withoutPadding().encodeToString(digest);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is a mandatory JCE algorithm", e);
    }
  }

  /** {@code TYPE BASE64}. */
  String publicKeyText() {
    return type + " " + base64;
  }

  /** The known_hosts line for {@code address}: {@code [address]:port} unless the port is 22, as OpenSSH writes it. */
  String knownHostsLine(String address, int port) {
    return KnownHostsText.hostPattern(address, port) + " " + publicKeyText();
  }
}
