package dev.inplace.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class PollerOptionsTest {
  @Test
  void withoutTheVariableTheSdkKeepsItsStickyDefault() {
    assertEquals(Optional.empty(), PollerOptions.fromEnvironment(Map.of()).stickyScheduleToStart());
  }

  @Test
  void zeroTurnsTheStickyWaitOff() {
    assertEquals(
        Optional.of(Duration.ZERO),
        PollerOptions.fromEnvironment(Map.of("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS", "0")).stickyScheduleToStart());
  }

  @Test
  void aMalformedValueIsRefusedNamingTheVariable() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () -> PollerOptions.fromEnvironment(Map.of("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS", "-1")));
    assertTrue(e.getMessage().contains("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS"), e.getMessage());
  }

  @Test
  void everyKeyIsDocumentedInConfigurationMd() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
    for (String key : PollerOptions.KEYS) {
      assertTrue(doc.contains("`" + key + "`"), "docs/configuration.md does not document " + key);
    }
  }
}
