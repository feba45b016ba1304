package dev.inplace.sandbox.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FileSha256Test {
  @TempDir Path dir;

  @Test
  void aFileHashesToItsKnownDigestAcrossTheReadBuffer() throws Exception {
    Path small = Files.writeString(dir.resolve("abc"), "abc", StandardCharsets.US_ASCII);
    assertEquals("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad", FileSha256.of(small));

    // FIPS 180-2's million 'a's: more than one 64 KiB read.
    Path large = Files.write(dir.resolve("a-million"), "a".repeat(1_000_000).getBytes(StandardCharsets.US_ASCII));
    assertEquals("cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0", FileSha256.of(large));
  }

  @Test
  void aMissingFileIsAnErrorNotADigest() {
    assertThrows(NoSuchFileException.class, () -> FileSha256.of(dir.resolve("missing")));
  }
}
