package dev.inplace.sandbox.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.KeyPair;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Host keys are Ed25519 (cheap to generate, one per node), the client key RSA; both persist. */
class KeyFilesTest {
  @TempDir Path dir;

  @Test
  void anEd25519KeyIsStoredPrivatelyWithItsPublicLineAndLoadsBackAsTheSameKey() throws Exception {
    Path file = dir.resolve("host-keys/worker-0_ed25519_key");
    KeyPair generated = KeyFiles.loadOrGenerate(file, "worker-0", KeyFiles.Kind.ED25519);

    String line = KeyFiles.publicKeyLine(generated.getPublic());
    assertTrue(line.startsWith("ssh-ed25519 AAAA"), line);
    assertEquals("rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
    assertTrue(Files.readString(file).startsWith("-----BEGIN OPENSSH PRIVATE KEY-----"));
    assertEquals(line + " worker-0\n", Files.readString(dir.resolve("host-keys/worker-0_ed25519_key.pub")));

    KeyPair loaded = KeyFiles.loadOrGenerate(file, "worker-0", KeyFiles.Kind.ED25519);
    assertEquals(line, KeyFiles.publicKeyLine(loaded.getPublic()));
  }

  @Test
  void everyNodeGetsItsOwnHostKey() {
    KeyPair a = KeyFiles.loadOrGenerate(dir.resolve("a_ed25519_key"), "a", KeyFiles.Kind.ED25519);
    KeyPair b = KeyFiles.loadOrGenerate(dir.resolve("b_ed25519_key"), "b", KeyFiles.Kind.ED25519);
    assertNotEquals(KeyFiles.publicKeyLine(a.getPublic()), KeyFiles.publicKeyLine(b.getPublic()));
  }

  @Test
  void theClientKeyStaysRsa() {
    KeyPair client = KeyFiles.loadOrGenerate(dir.resolve("id_rsa"), "client", KeyFiles.Kind.RSA);
    assertTrue(KeyFiles.publicKeyLine(client.getPublic()).startsWith("ssh-rsa AAAA"));
  }
}
