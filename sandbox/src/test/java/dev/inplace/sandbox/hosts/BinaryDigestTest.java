package dev.inplace.sandbox.hosts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class BinaryDigestTest {
  @TempDir Path dir;

  @Test
  void opensslAndTheJdkGiveTheSameDigestOfABinary() throws Exception {
    Path binary = dir.resolve("k3s");
    byte[] content = new byte[3 * 1024 * 1024 + 17];
    new Random(7).nextBytes(content);
    Files.write(binary, content);

    String jdk = BinaryDigest.jdk(binary);
    assertTrue(jdk.matches("[0-9a-f]{64}"), jdk);
    assertEquals(jdk, BinaryDigest.openssl(binary), "openssl is on this machine kind (Debian's openssl package)");
    assertEquals(jdk, BinaryDigest.sha256(binary));
  }

  @Test
  void aMissingBinaryIsAbsentAndOpensslsRefusalFallsBackToTheJdk() {
    Path missing = dir.resolve("no-such-binary");
    assertNull(BinaryDigest.openssl(missing), "openssl fails on a missing file: no digest from it");
    assertEquals("absent", BinaryDigest.sha256(missing));
  }

  @Test
  void aNameThatLooksLikeADigestLineIsNotTakenForOne() throws Exception {
    Path odd = dir.resolve("x\n" + "0".repeat(64) + " *y");
    Files.writeString(odd, "content");
    assertEquals(BinaryDigest.jdk(odd), BinaryDigest.sha256(odd));
  }
}
