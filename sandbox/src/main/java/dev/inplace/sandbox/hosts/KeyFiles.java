package dev.inplace.sandbox.hosts;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.KeyPairGenerator;
import java.security.PublicKey;
import java.util.Iterator;
import org.apache.sshd.common.NamedResource;
import org.apache.sshd.common.config.keys.KeyUtils;
import org.apache.sshd.common.config.keys.PublicKeyEntry;
import org.apache.sshd.common.config.keys.writer.openssh.OpenSSHKeyPairResourceWriter;
import org.apache.sshd.common.keyprovider.KeyPairProvider;
import org.apache.sshd.common.util.security.SecurityUtils;

/**
 * Key pairs persisted in OpenSSH format, of two kinds ({@link Kind}): RSA for the client key,
 * Ed25519 for the nodes' host keys. Not ECDSA: sshj 0.40 decodes ECDSA keys through a KeyFactory
 * named "ECDSA", which only BouncyCastle provides, so with BouncyCastle not registered (the
 * product's fast configuration) ECDSA client keys, host keys and known_hosts lines fail to load. A
 * real OpenSSH client or server accepts the same files.
 */
final class KeyFiles {
  /** What kind of key a file holds. */
  enum Kind {
    /**
     * RSA 2048, the client key: it loads in sshj with the JDK's own providers. Generating one costs
     * about 1 s of CPU in the stack's C1-only JVMs (0.2 s with C2), so one per estate, never per node.
     */
    RSA,
    /**
     * Ed25519, the host keys: one per node, so their cost grows with the estate. Generating one costs
     * well under 1 ms (after about 1 s, once, to load the provider), and a pin on an Ed25519 key is
     * as strong as on RSA 2048 (the product prefers ssh-ed25519 among its host key algorithms).
     */
    ED25519
  }

  private static final int RSA_BITS = 2048;

  private KeyFiles() {}

  /**
   * Loads the key pair stored at {@code file}, generating and storing one of {@code kind} (mode
   * 0600) if absent.
   */
  static KeyPair loadOrGenerate(Path file, String comment, Kind kind) {
    try {
      if (Files.exists(file)) {
        return load(file);
      }
      KeyPair pair = generate(kind);
      Files.createDirectories(file.getParent());
      Path tmp = file.resolveSibling(file.getFileName() + ".tmp");
      Files.deleteIfExists(tmp);
      Files.createFile(
          tmp, PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------")));
      Files.writeString(tmp, openSshPrivateKey(pair, comment), StandardCharsets.US_ASCII);
      Files.move(tmp, file, StandardCopyOption.ATOMIC_MOVE);
      Files.writeString(
          file.resolveSibling(file.getFileName() + ".pub"),
          publicKeyLine(pair.getPublic()) + " " + comment + "\n",
          StandardCharsets.US_ASCII);
      return pair;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot create key " + file, e);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("cannot generate an " + kind + " key pair", e);
    }
  }

  private static KeyPair generate(Kind kind) throws GeneralSecurityException {
    if (kind == Kind.ED25519) {
      // Through Apache MINA's registrar (BouncyCastle's EdDSA): MINA's server signs with the key, and
      // its OpenSSH writer and reader handle it; the JDK's own Ed25519 keys they do not.
      return KeyUtils.generateKeyPair(KeyPairProvider.SSH_ED25519, 256);
    }
    KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
    generator.initialize(RSA_BITS);
    return generator.generateKeyPair();
  }

  /**
   * The private key in OpenSSH format ({@code -----BEGIN OPENSSH PRIVATE KEY-----}), unencrypted.
   */
  static String openSshPrivateKey(KeyPair pair, String comment) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      OpenSSHKeyPairResourceWriter.INSTANCE.writePrivateKey(pair, comment, null, out);
      return out.toString(StandardCharsets.US_ASCII);
    } catch (IOException | GeneralSecurityException e) {
      throw new IllegalStateException("cannot encode a private key in OpenSSH format", e);
    }
  }

  /** {@code <type> <base64>}, as in authorized_keys and known_hosts. */
  static String publicKeyLine(PublicKey key) {
    return PublicKeyEntry.toString(key);
  }

  private static KeyPair load(Path file) throws IOException, GeneralSecurityException {
    try (InputStream in = Files.newInputStream(file)) {
      Iterable<KeyPair> pairs =
          SecurityUtils.loadKeyPairIdentities(
              null, NamedResource.ofName(file.toString()), in, null);
      Iterator<KeyPair> it = pairs == null ? null : pairs.iterator();
      if (it == null || !it.hasNext()) {
        throw new IOException("no key pair in " + file);
      }
      return it.next();
    }
  }
}
