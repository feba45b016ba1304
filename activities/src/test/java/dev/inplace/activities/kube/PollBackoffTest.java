package dev.inplace.activities.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class PollBackoffTest {
  private static List<Long> waits(PollBackoff backoff, int n) {
    List<Long> waits = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      waits.add(backoff.nextMillis());
    }
    return waits;
  }

  @Test
  void startsShortAndGrowsByHalfUpToTheLongestWait() {
    assertEquals(List.of(50L, 75L, 112L, 168L, 252L, 378L, 500L, 500L, 500L),
        waits(new PollBackoff(Duration.ofMillis(500)), 9));
  }

  @Test
  void aLongestWaitBelowTheFirstIsKept() {
    assertEquals(List.of(10L, 10L, 10L), waits(new PollBackoff(Duration.ofMillis(10)), 3));
  }

  @Test
  void aLongFirstWaitStartsThereCappedByTheLongest() {
    assertEquals(List.of(5000L, 5000L), waits(new PollBackoff(Duration.ofSeconds(5), Duration.ofSeconds(5)), 2));
    assertEquals(List.of(10L, 10L), waits(new PollBackoff(Duration.ofSeconds(5), Duration.ofMillis(10)), 2));
  }
}
