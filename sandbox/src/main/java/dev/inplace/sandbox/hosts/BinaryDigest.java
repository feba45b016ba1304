package dev.inplace.sandbox.hosts;

import dev.inplace.sandbox.release.FileSha256;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;

/**
 * The sha256 of a binary a simulated node starts: the kubelet simulator's ground truth of which file
 * ran. Hashed by {@code openssl dgst -sha256} when the machine has it (the CPU's SHA instructions, 16
 * MiB in ~0.02 s whatever the JVM's state), else by the JDK, which reaches those instructions only
 * once C2 has compiled its SHA-256 (0.23-0.41 s per 16 MiB before; docs/benchmarks.md): so the
 * estate's JVM needs no C2 for it. Either way the same hex digest, {@code absent} for a missing file
 * and {@code unreadable: ...} for one that cannot be read.
 */
final class BinaryDigest {
  private static final Pattern OPENSSL_LINE = Pattern.compile("^([0-9a-f]{64}) \\*?.*", Pattern.DOTALL);
  private static volatile boolean opensslMissing;

  private BinaryDigest() {}

  static String sha256(Path file) {
    if (!opensslMissing && Files.isRegularFile(file)) {
      String digest = openssl(file);
      if (digest != null) {
        return digest;
      }
    }
    return jdk(file);
  }

  /** openssl's digest, or null when it is missing or answers anything but one (the JDK then hashes). */
  static String openssl(Path file) {
    try {
      Process p = new ProcessBuilder("openssl", "dgst", "-sha256", "-r", file.toString())
          .redirectError(ProcessBuilder.Redirect.DISCARD)
          .start();
      // Its answer (one line) fits the pipe's buffer, so it can end before it is read: wait first,
      // and a hung openssl is cut after 30 s instead of holding the caller.
      if (!p.waitFor(30, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return null;
      }
      byte[] out = p.getInputStream().readAllBytes();
      var m = OPENSSL_LINE.matcher(new String(out, StandardCharsets.US_ASCII));
      return p.exitValue() == 0 && m.matches() ? m.group(1) : null;
    } catch (IOException e) {
      opensslMissing = true; // not on PATH: ask no more
      return null;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return null;
    }
  }

  static String jdk(Path file) {
    try {
      return FileSha256.of(file);
    } catch (NoSuchFileException e) {
      return "absent";
    } catch (IOException e) {
      return "unreadable: " + e.getMessage();
    }
  }
}
