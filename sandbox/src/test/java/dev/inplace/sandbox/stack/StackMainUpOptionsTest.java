package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code up --temporal}: a bad value is a usage error before anything starts. */
class StackMainUpOptionsTest {
  @TempDir Path dir;

  @Test
  void anUnknownTemporalServerIsAUsageErrorThatStartsNothing() {
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();

    int rc = StackMain.main("up", List.of("--temporal", "cloud", "--dir", dir.toString()),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));

    String message = err.toString(StandardCharsets.UTF_8);
    assertEquals(2, rc, message);
    assertTrue(message.contains("--temporal must be test-server or dev-server, got 'cloud'"), message);
    assertTrue(message.contains("--temporal SERVER"), "the usage names the option: " + message);
    assertFalse(Files.exists(new StackLayout(dir).pids()), "nothing was started");
  }
}
