package dev.inplace.sandbox.bench;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class StackCpuTest {
  /** Parent PID, utime, stime, cutime, cstime. */
  private static long[] p(long ppid, long utime, long stime, long cutime, long cstime) {
    return new long[] {ppid, utime, stime, cutime, cstime};
  }

  @Test
  void theHostsAreEveryProcessBelowTheEstateLiveOrReaped() {
    Map<Long, long[]> processes = Map.of(
        10L, p(1, 500, 100, 30, 5), // the estate: its own ticks are not the hosts', its reaped children's are
        11L, p(10, 2, 1, 40, 4), // an sshd listener, with the sessions it reaped
        12L, p(11, 3, 2, 7, 1), // a session, with the scripts it reaped
        13L, p(12, 1, 1, 0, 0), // a script still running
        20L, p(1, 99, 99, 99, 99)); // not below the estate
    assertEquals(35 + 47 + 13 + 2, StackCpu.belowTicks(processes, 10));
    assertEquals(0, StackCpu.belowTicks(processes, 99), "no such root");
  }

  @Test
  void aProcessThatEndsBetweenTwoReadingsCountsOnceWithWhatItUsedBetweenThem() {
    long before = StackCpu.belowTicks(Map.of(10L, p(1, 0, 0, 0, 0), 11L, p(10, 5, 5, 0, 0)), 10);
    // 11 used 5 more ticks, ended, and was reaped by the estate.
    long after = StackCpu.belowTicks(Map.of(10L, p(1, 0, 0, 12, 3)), 10);
    assertEquals(5, after - before);
  }

  @Test
  void readsTheParentAndTicksAfterANameWithSpacesAndParentheses() {
    String stat = "4242 (sshd: (x) y) S 77 4242 4242 0 -1 4194560 100 0 0 0 250 50 31 7 20 0 30 0 100 0 0";
    assertArrayEquals(new long[] {77, 250, 50, 31, 7}, StackCpu.statFields(stat));
  }

  @Test
  void theJitIsTheTicksOfTheCompilerThreadsOnly() {
    List<String> tasks = List.of(
        "100 (java) S 1 100 100 0 -1 0 0 0 0 0 40 10 0 0 20 0 30 0 100 0 0",
        "101 (C2 CompilerThre) S 1 100 100 0 -1 0 0 0 0 0 300 20 0 0 20 0 30 0 100 0 0",
        "102 (C1 CompilerThre) S 1 100 100 0 -1 0 0 0 0 0 70 5 0 0 20 0 30 0 100 0 0",
        "103 (C2 Compiler) S 1 100 100 0 -1 0 0 0 0 0 9 9 0 0 20 0 30 0 100 0 0", // a thread merely named like one
        "104 (sshj (C2 x)) S 1 100 100 0 -1 0 0 0 0 0 9 9 0 0 20 0 30 0 100 0 0");
    assertEquals(Map.of(101L, 320L, 102L, 75L), StackCpu.jitTicks(tasks));
    assertEquals(Map.of(), StackCpu.jitTicks(List.of()));
  }

  @Test
  void aCompilerThreadThatEndsBetweenTwoReadingsTakesItsTicksWithItAndANewOneCountsFromZero() {
    Map<Long, Long> before = Map.of(101L, 300L, 102L, 70L, 103L, 90L);
    Map<Long, Long> after = Map.of(101L, 340L, 102L, 70L, 104L, 15L); // 103 stopped, 104 started
    assertEquals(40 + 0 + 15, StackCpu.ticksBetween(before, after));
  }

  @Test
  void aReadingOfThisJvmFindsItsCompilerThreadsWithinItsOwnTicks() throws Exception {
    long self = ProcessHandle.current().pid();
    StackCpu.Reading reading = StackCpu.read(self, -1, -1);
    long jit = StackCpu.ticksBetween(Map.of(), reading.workerJit());
    assertTrue(jit > 0, "this JVM has compiled something by now: " + reading);
    assertTrue(jit <= reading.worker(), reading.toString());
    assertEquals(Map.of(), reading.temporalJit(), "no such process: nothing");
  }

  @Test
  void theMachineIsBusyInUserNiceSystemIrqSoftirqAndStealAndIdleInIdleAndIowait() {
    assertArrayEquals(new long[] {161, 1020}, StackCpu.machineTicks("cpu  100 5 50 1000 20 3 2 1 0 0"));
    assertThrows(IllegalArgumentException.class, () -> StackCpu.machineTicks("cpu0 1 2 3 4 5 6 7 8 9 10"));
  }

  @Test
  void aReadingOfThisProcessCountsTheChildItRanAndReaped() throws Exception {
    long self = ProcessHandle.current().pid();
    StackCpu.Reading before = StackCpu.read(-1, -1, self);
    Process busy = new ProcessBuilder("bash", "-c", "x=0; while [ $x -lt 300000 ]; do x=$((x+1)); done").start();
    assertEquals(0, busy.waitFor());
    StackCpu.Reading after = StackCpu.read(-1, -1, self);

    assertTrue(after.hosts() > before.hosts(), before + " -> " + after);
    assertTrue(after.machineBusy() > before.machineBusy(), before + " -> " + after);
    StackCpu cpu = StackCpu.between(before, after, 100);
    assertEquals(0, cpu.worker(), "no such process: nothing");
  }
}
