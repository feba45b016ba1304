package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

class DemoOptionsRestartTest {

  @Test
  void theKubeletStaysNotReadyForTheRestartSeconds() {
    assertEquals(Duration.ofSeconds(1), DemoOptions.parse().estateSpec().kubeletStartupDelay());
    assertEquals(Duration.ofMillis(2500),
        DemoOptions.parse("--restart-seconds", "2.5").estateSpec().kubeletStartupDelay());
    assertEquals(Duration.ZERO, DemoOptions.parse("--restart-seconds", "0").estateSpec().kubeletStartupDelay());
  }

  @Test
  void restartSecondsOutsideTheRangeOrNotANumberAreRefused() {
    for (String bad : List.of("-1", "601", "NaN", "soon")) {
      IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
          () -> DemoOptions.parse("--restart-seconds", bad));
      assertTrue(e.getMessage().contains("--restart-seconds"), e.getMessage());
    }
  }

  @Test
  void theEstateProcessGetsTheRestartSeconds() {
    assertEquals(List.of("--restart-seconds", "3", "--hosts", "mina"),
        DemoOptions.estateArgs(List.of("--restart-seconds", "3", "--json", "--hosts", "mina")));
  }
}
