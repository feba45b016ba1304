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
import org.apache.sshd.common.config.keys.PublicKeyEntry;
import org.apache.sshd.common.config.keys.writer.openssh.OpenSSHKeyPairResourceWriter;
import org.apache.sshd.common.util.security.SecurityUtils;

/**
 * RSA key pairs persisted in OpenSSH format. RSA, not ECDSA: sshj 0.40 decodes ECDSA keys through a
 * KeyFactory named "ECDSA", which only BouncyCastle provides, so with BouncyCastle not registered
 * (the product's fast configuration) ECDSA client keys, host keys and known_hosts lines fail to
 * load. RSA keys load with the JDK's own providers, and a real OpenSSH client or server accepts the
 * same files.
 */
final class KeyFiles {
  private static final int RSA_BITS = 2048;

  private KeyFiles() {}

  /**
   * Loads the key pair stored at {@code file}, generating and storing one (mode 0600) if absent.
   */
  static KeyPair loadOrGenerate(Path file, String comment) {
    try {
      if (Files.exists(file)) {
        return load(file);
      }
      KeyPairGenerator generator = KeyPairGenerator.getInstance("RSA");
      generator.initialize(RSA_BITS);
      KeyPair pair = generator.generateKeyPair();
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
      throw new IllegalStateException("cannot generate an RSA key pair", e);
    }
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
