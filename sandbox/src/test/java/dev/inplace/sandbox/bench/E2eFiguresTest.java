package dev.inplace.sandbox.bench;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class E2eFiguresTest {
  private static E2eFigures.Measured measured(List<Double> nodeWalls, double wall) {
    // 16 MiB by scp in 0.5 s: 32 MiB/s; SFTP in 0.625 s: 25.6 MiB/s (the medians of three rounds).
    return measured(nodeWalls, wall, List.of(0.5, 1.5, 0.25), List.of(0.1, 0.625, 3.0));
  }

  private static E2eFigures.Measured measured(List<Double> nodeWalls, double wall, List<Double> scp, List<Double> sftp) {
    return new E2eFigures.Measured("openssh", 20, 5, 16, 2.0, nodeWalls.size(), wall, nodeWalls,
        nodeWalls.stream().map(w -> w + 1.0).toList(), Map.of("stage", List.of(0.7, 0.5, 0.6)), 12.0, 300 * 1024 + 512,
        scp, sftp);
  }

  @Test
  void idealIsWavesTimesRestartPlusTransferAtTheScpRate() {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0, 3.5), 15.0));
    assertEquals(32.0, f.scpMiBps());
    assertEquals(4 * (2.0 + 0.5), f.idealSeconds()); // ceil(20/5) waves
    assertEquals(1.5, f.ratio());
  }

  @Test
  void idealRoundsPartialWavesUp() {
    E2eFigures f = E2eFigures.of(new E2eFigures.Measured("mina", 21, 5, 16, 2.0, 21, 20, List.of(), List.of(), Map.of(),
        0, 0, List.of(0.5), List.of(0.5)));
    assertEquals(5 * 2.5, f.idealSeconds());
  }

  @Test
  void overheadIsNodeWallMinusTransferAndRestart() {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0, 3.5, 2.75, 4.5), 15.0));
    // minus 2.5 each: 0.5, 1.0, 0.25, 2.0 -> median (0.5 + 1.0) / 2, p95 the largest of four
    assertEquals(0.75, f.perNodeOverheadSeconds().median());
    assertEquals(2.0, f.perNodeOverheadSeconds().p95());
    assertEquals(3.25, f.nodeWallSeconds().median());
  }

  @Test
  void theSpanOfANodePreparedAheadIsReportedBesideItsTimeInTheWindow() {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0, 3.5, 2.75, 4.5), 15.0));
    // The overhead counts the time in the window only; the span (preflight to end) is its own figure.
    assertEquals(3.25, f.nodeWallSeconds().median());
    assertEquals(4.25, f.nodeSpanSeconds().median());
    assertEquals(5.5, f.nodeSpanSeconds().p95());
  }

  @Test
  void workerFiguresAreCpuPerNodeAndRssInMiB() {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0), 15.0));
    assertEquals(0.6, f.workerCpuSecondsPerNode()); // 12 CPU-s over 20 nodes
    assertEquals(300, f.workerPeakRssMiB());
  }

  @Test
  void sftpIsComparedWithScpOnTheSameFile() {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0), 15.0));
    assertEquals(25.6, f.sftpMiBps());
    assertEquals(0.8, f.sftpToScp());
    assertEquals(0.6, f.stepMedianSeconds().get("stage"));
  }

  @Test
  void p95IsTheNearestRank() {
    List<Double> twenty = new java.util.ArrayList<>();
    for (int i = 1; i <= 20; i++) {
      twenty.add((double) i);
    }
    assertEquals(19.0, E2eFigures.spread(twenty).p95());
    assertEquals(10.5, E2eFigures.spread(twenty).median());
  }

  @Test
  void eachSideIsTheMedianOfItsRoundsNotTheirMean() {
    // scp: 0.4, 0.5, 4.0 -> 0.5 s (mean 1.63); SFTP: 0.5, 0.4, 0.45 -> 0.45 s (one slow scp round moves nothing).
    E2eFigures f = E2eFigures.of(measured(List.of(3.0), 15.0, List.of(4.0, 0.4, 0.5), List.of(0.5, 0.4, 0.45)));
    assertEquals(32.0, f.scpMiBps());
    assertEquals(35.556, f.sftpMiBps()); // 16 / 0.45
    assertEquals(1.111, f.sftpToScp()); // 0.5 / 0.45
    assertEquals(4 * (2.0 + 0.5), f.idealSeconds()); // the ideal's link rate is scp's median
  }

  @Test
  void anEvenNumberOfRoundsTakesTheMeanOfTheMiddleTwo() {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0), 15.0, List.of(0.25, 1.0, 0.75, 9.0), List.of(0.5, 0.5)));
    assertEquals(18.286, f.scpMiBps()); // 16 / 0.875
    assertEquals(32.0, f.sftpMiBps());
  }

  @Test
  void theRoundsAreReportedInTheirOrderAsMeasured() throws Exception {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0), 15.0, List.of(0.9004, 0.4, 0.5), List.of(0.5, 0.61249, 0.45)));
    assertEquals(List.of(0.9, 0.4, 0.5), f.scpSeconds());
    assertEquals(List.of(0.5, 0.612, 0.45), f.sftpSeconds());
    String json = new ObjectMapper().writeValueAsString(f);
    assertTrue(json.contains("\"scpMiBps\":32.0,\"sftpMiBps\":32.0,\"sftpToScp\":1.0,"
        + "\"scpSeconds\":[0.9,0.4,0.5],\"sftpSeconds\":[0.5,0.612,0.45],"), json);
  }

  @Test
  void theTimedPartsCpuIsReportedByProcessAndForTheMachine() throws Exception {
    E2eFigures f = E2eFigures.of(measured(List.of(3.0), 15.0)).withCpu(new StackCpu(17.8, 7.5, 3.4, 0.6, 5.3, 1.9, 11.3, 42.1, 3.2));
    String json = new ObjectMapper().writeValueAsString(f);
    assertTrue(json.endsWith("\"cpuSeconds\":{\"worker\":17.8,\"workerJit\":7.5,\"temporal\":3.4,\"temporalJit\":0.6,"
        + "\"estate\":5.3,\"estateJit\":1.9,\"hosts\":11.3,\"machineBusy\":42.1,\"machineIdle\":3.2}}"), json);
    assertEquals(0.6, f.workerCpuSecondsPerNode(), "the figures themselves are unchanged");
  }

  @Test
  void theRoundsAlternateWhichCopyGoesFirst() {
    assertEquals(3, LinkProbe.ROUNDS);
    assertEquals(List.of(true, false, true), List.of(LinkProbe.scpFirst(0), LinkProbe.scpFirst(1), LinkProbe.scpFirst(2)));
  }

  @Test
  void refusesACopyThatTookNoTime() {
    assertThrows(IllegalArgumentException.class, () -> E2eFigures.of(measured(List.of(1.0), 1, List.of(0.0), List.of(1.0))));
    assertThrows(IllegalArgumentException.class,
        () -> E2eFigures.of(measured(List.of(1.0), 1, List.of(0.5, 0.5, 0.5), List.of(0.5, 0.0, 0.5))));
  }

  @Test
  void refusesASideWithoutRounds() {
    assertThrows(IllegalArgumentException.class, () -> E2eFigures.of(measured(List.of(1.0), 1, List.of(0.5), List.of())));
  }

  @Test
  void readsCpuTicksAfterTheProcessName() {
    // The name may hold spaces and parentheses; utime (14) = 250, stime (15) = 50.
    String stat = "4242 (java (x) y) S 1 4242 4242 0 -1 4194560 100 0 0 0 250 50 0 0 20 0 30 0 100 0 0";
    assertEquals(300, ProcessStats.cpuTicks(stat));
  }

  @Test
  void readsThePeakResidentSet() {
    assertEquals(123456, ProcessStats.peakRssKiB("Name:\tjava\nVmPeak:\t 999999 kB\nVmHWM:\t  123456 kB\nVmRSS:\t 1 kB\n"));
  }
}
