package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The checks every golden script test makes on a rendered script: byte for byte its golden file
 * (rewritten first with {@code -Dgolden.update=true}), the header the sandbox's fault injection
 * relies on, and valid bash. One helper for each distribution's and host OS's test.
 */
final class GoldenScripts {
  private static final boolean UPDATE = Boolean.getBoolean("golden.update");

  private final Path dir;

  /** Golden files under {@code src/test/resources/golden/<folder>}. */
  GoldenScripts(String folder) {
    this.dir = Path.of("src/test/resources/golden").resolve(folder);
  }

  /** {@code script} equals {@code <folder>/<name>.sh}; with golden.update set, the file is rewritten first. */
  void assertMatchesGoldenFile(String name, RemoteScript script) throws IOException {
    Path golden = dir.resolve(name + ".sh");
    if (UPDATE) {
      Files.createDirectories(dir);
      Files.writeString(golden, script.text(), StandardCharsets.UTF_8);
    }
    assertTrue(Files.exists(golden), "missing golden file " + golden + "; run with -Dgolden.update=true");
    assertEquals(Files.readString(golden, StandardCharsets.UTF_8), script.text());
  }

  /** The four header lines: shebang, the step marker, {@code set -eu}, the host root. */
  static void assertStepHeader(RemoteScript script) {
    List<String> lines = Arrays.asList(script.text().split("\n", 5));
    assertEquals(
        List.of("#!/bin/bash", "# inplace-step: " + script.step(), "set -eu", "root=\"${INPLACE_HOST_ROOT:-}\""),
        lines.subList(0, 4));
  }

  /** {@code bash -n} accepts the script. */
  static void assertValidBash(String name, RemoteScript script) throws Exception {
    Process bash = new ProcessBuilder("bash", "-n").redirectErrorStream(true).start();
    try (var stdin = bash.getOutputStream()) {
      stdin.write(script.text().getBytes(StandardCharsets.UTF_8));
    }
    String output = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(bash.waitFor(10, TimeUnit.SECONDS));
    assertEquals(0, bash.exitValue(), name + ": " + output);
  }
}
