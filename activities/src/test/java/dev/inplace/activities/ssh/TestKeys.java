package dev.inplace.activities.ssh;

import java.io.ByteArrayOutputStream;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.KeyPair;
import java.security.PublicKey;
import org.apache.sshd.common.config.keys.KeyUtils;
import org.apache.sshd.common.config.keys.PublicKeyEntry;
import org.apache.sshd.common.config.keys.writer.openssh.OpenSSHKeyPairResourceWriter;

/** Generated ECDSA P-256 keys, and their OpenSSH text forms as they would sit in Secrets. */
public final class TestKeys {
  private TestKeys() {}

  public static KeyPair generate() {
    try {
      return KeyUtils.generateKeyPair("ecdsa-sha2-nistp256", 256);
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException(e);
    }
  }

  /** The unencrypted "-----BEGIN OPENSSH PRIVATE KEY-----" text of a key pair. */
  public static String openSshPrivateKey(KeyPair pair) {
    try {
      ByteArrayOutputStream out = new ByteArrayOutputStream();
      OpenSSHKeyPairResourceWriter.INSTANCE.writePrivateKey(pair, "inplace-test", null, out);
      return out.toString(StandardCharsets.UTF_8);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  /** "ecdsa-sha2-nistp256 AAAA..." as in known_hosts and authorized_keys. */
  public static String publicKeyEntry(PublicKey key) {
    return PublicKeyEntry.toString(key);
  }

  /** The OpenSSH SHA256 fingerprint ("SHA256:..."), computed by MINA independently of our code. */
  public static String fingerprint(PublicKey key) {
    return KeyUtils.getFingerPrint(key);
  }
}
