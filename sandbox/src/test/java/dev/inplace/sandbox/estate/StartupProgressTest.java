package dev.inplace.sandbox.estate;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/** The estate's start-up lines: phases with their time, hosts at most every 5 s. */
class StartupProgressTest {
  private final List<String> lines = new ArrayList<>();
  private final AtomicLong now = new AtomicLong(1_000);

  private void advance(double seconds) {
    now.addAndGet((long) (seconds * TimeUnit.SECONDS.toNanos(1)));
  }

  @Test
  void phasesCarryTheSecondsSinceTheStart() {
    StartupProgress progress = new StartupProgress(lines::add, now::get, 3);
    advance(1.25);
    progress.phase("releases written");
    advance(10);
    progress.phase("hosts provisioned: 3");
    assertEquals(List.of("estate: releases written (1.3 s)", "estate: hosts provisioned: 3 (11.3 s)"), lines);
  }

  @Test
  void hostsAreCountedAtMostEveryFiveSecondsAndNotForTheLastOne() {
    StartupProgress progress = new StartupProgress(lines::add, now::get, 101);
    for (int done = 1; done <= 101; done++) {
      advance(1); // one host a second
      progress.hostProvisioned(done);
    }
    assertEquals(20, lines.size(), lines.toString());
    assertEquals("estate: hosts 5/101 provisioned (5.0 s)", lines.get(0));
    assertEquals("estate: hosts 100/101 provisioned (100.0 s)", lines.get(19));
  }

  @Test
  void aQuickStartWritesNoHostLines() {
    StartupProgress progress = new StartupProgress(lines::add, now::get, 7);
    for (int done = 1; done <= 7; done++) {
      advance(0.1);
      progress.hostProvisioned(done);
    }
    assertEquals(List.of(), lines);
  }
}
