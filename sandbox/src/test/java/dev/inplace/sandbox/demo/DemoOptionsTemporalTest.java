package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.stack.TemporalServer;
import java.util.List;
import org.junit.jupiter.api.Test;

/** {@code --temporal}: the test server by default, the dev server on the local stack only. */
class DemoOptionsTemporalTest {

  @Test
  void theTestServerIsTheDefaultAndDevServerIsChosenWithTheProcessTopology() {
    assertEquals(TemporalServer.TEST_SERVER, DemoOptions.parse().temporal());
    assertEquals(TemporalServer.TEST_SERVER,
        DemoOptions.parse("--topology", "processes", "--temporal", "test-server").temporal());
    assertEquals(TemporalServer.DEV_SERVER,
        DemoOptions.parse("--topology", "processes", "--temporal", "dev-server").temporal());
  }

  @Test
  void theDevServerIsRefusedForTheInProcessDemoWithTheReason() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> DemoOptions.parse("--temporal", "dev-server"));
    assertTrue(e.getMessage().contains("--temporal dev-server needs --topology processes"), e.getMessage());
  }

  @Test
  void anUnknownServerIsRefusedByName() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> DemoOptions.parse("--topology", "processes", "--temporal", "cloud"));
    assertTrue(e.getMessage().contains("--temporal must be test-server or dev-server, got 'cloud'"), e.getMessage());
  }

  @Test
  void theEstateProcessIsNotGivenTheTemporalChoice() {
    assertEquals(List.of("--workers", "2"),
        DemoOptions.estateArgs(List.of("--topology", "processes", "--temporal", "dev-server", "--workers", "2")));
  }
}
