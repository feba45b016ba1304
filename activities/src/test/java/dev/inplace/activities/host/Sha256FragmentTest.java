package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.Random;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code scripts/lib/sha256.sh} run with bash: the digest comes from openssl where it is installed
 * and answers a digest, else from sha256sum, and is the file's SHA-256 either way.
 */
class Sha256FragmentTest {
  @TempDir Path dir;
  private Path file;
  private String expected;

  @BeforeEach
  void aFile() throws Exception {
    byte[] bytes = new byte[3 * 1024 * 1024 + 17];
    new Random(12).nextBytes(bytes);
    file = Files.write(dir.resolve("artifact"), bytes);
    expected = HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }

  private static String fragment() throws Exception {
    try (InputStream in = Sha256FragmentTest.class.getResourceAsStream("/scripts/lib/sha256.sh")) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** Runs {@code sha256_of path} with {@code path} first on the PATH (null: the machine's PATH only). */
  private String sha256Of(Path target, Path pathFirst) throws Exception {
    ProcessBuilder builder = new ProcessBuilder("bash", "-s");
    String path = System.getenv("PATH");
    builder.environment().put("PATH", pathFirst == null ? path : pathFirst + ":" + path);
    builder.redirectError(ProcessBuilder.Redirect.DISCARD);
    Process bash = builder.start();
    try (var stdin = bash.getOutputStream()) {
      stdin.write((fragment() + "\nsha256_of '" + target + "'\n").getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(bash.waitFor(30, TimeUnit.SECONDS));
    return out.trim();
  }

  private Path fakeOpenssl(String body) throws Exception {
    Path bin = Files.createDirectories(dir.resolve("bin-" + Math.abs(body.hashCode())));
    Path openssl = bin.resolve("openssl");
    Files.writeString(openssl, "#!/bin/bash\n" + body + "\n");
    Files.setPosixFilePermissions(openssl, PosixFilePermissions.fromString("rwxr-xr-x"));
    return bin;
  }

  @Test
  void aHostWithOpensslHashesWithIt() throws Exception {
    Path calls = dir.resolve("openssl.calls");
    Path bin = fakeOpenssl("echo \"$*\" >> '" + calls + "'\nPATH=\"${PATH#*:}\" exec openssl \"$@\"");
    assertEquals(expected, sha256Of(file, bin));
    assertTrue(Files.readString(calls).contains("dgst -sha256 -r " + file), Files.readString(calls));
  }

  @Test
  void anOpensslThatAnswersNoDigestFallsBackToSha256sum() throws Exception {
    assertEquals(expected, sha256Of(file, fakeOpenssl("echo 'Error: unsupported digest'")));
    assertEquals(expected, sha256Of(file, fakeOpenssl("exit 1")));
    assertEquals(expected, sha256Of(file, fakeOpenssl("echo 'ABCDEF0123 *x'")));
  }

  @Test
  void aHostWithoutOpensslUsesSha256sum() throws Exception {
    Path bin = Files.createDirectories(dir.resolve("no-openssl"));
    Path sha256sum = bin.resolve("sha256sum");
    Files.writeString(sha256sum, "#!/usr/bin/bash\nexec /usr/bin/sha256sum \"$@\"\n");
    Files.setPosixFilePermissions(sha256sum, PosixFilePermissions.fromString("rwxr-xr-x"));
    ProcessBuilder builder = new ProcessBuilder("/usr/bin/bash", "-s");
    builder.environment().put("PATH", bin.toString());
    Process bash = builder.start();
    try (var stdin = bash.getOutputStream()) {
      stdin.write((fragment() + "\ncommand -v openssl || echo no-openssl\nsha256_of '" + file + "'\n")
          .getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(bash.waitFor(30, TimeUnit.SECONDS));
    assertEquals("no-openssl\n" + expected, out.trim());
  }

  @Test
  void aMissingFileHasNoDigest() throws Exception {
    assertEquals("", sha256Of(dir.resolve("absent"), null));
  }
}
