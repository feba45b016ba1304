package dev.inplace.sandbox.bench;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The figures of {@code ./inplace bench --e2e}, computed from what the run measured (no timing here):
 * the ideal is ceil(N/W) x (R + M/linkRate) with the link rate of plain {@code scp} of the artifact
 * (M over the median of its rounds' seconds); SFTP's rate is M over the median of its own rounds, and
 * both sides' per-round seconds are reported as measured ({@link LinkProbe}). A node's overhead is
 * its wall time minus the transfer at scp's rate minus R. A node's wall time is its time in the
 * window: from its turn (a node prepared ahead has run its preflight and stage before it) to its end;
 * its span is from its preflight's start to its end.
 */
public record E2eFigures(
    String hosts,
    int nodes,
    int window,
    int binaryMiB,
    double restartSeconds,
    long upgraded,
    double wallSeconds,
    double idealSeconds,
    double ratio,
    Spread perNodeOverheadSeconds,
    Spread nodeWallSeconds,
    Spread nodeSpanSeconds,
    Map<String, Double> stepMedianSeconds,
    double workerCpuSeconds,
    double workerCpuSecondsPerNode,
    long workerPeakRssMiB,
    double scpMiBps,
    double sftpMiBps,
    double sftpToScp,
    List<Double> scpSeconds,
    List<Double> sftpSeconds,
    StackCpu cpuSeconds) {

  /** The same figures with where the timed part's CPU went ({@link StackCpu}). */
  public E2eFigures withCpu(StackCpu cpu) {
    return new E2eFigures(hosts, nodes, window, binaryMiB, restartSeconds, upgraded, wallSeconds, idealSeconds, ratio,
        perNodeOverheadSeconds, nodeWallSeconds, nodeSpanSeconds, stepMedianSeconds, workerCpuSeconds,
        workerCpuSecondsPerNode, workerPeakRssMiB, scpMiBps, sftpMiBps, sftpToScp, scpSeconds, sftpSeconds, cpu);
  }

  /** Median and 95th percentile (nearest rank). */
  public record Spread(double median, double p95) {}

  /** What one run measured. */
  public record Measured(
      String hosts,
      int nodes,
      int window,
      int binaryMiB,
      double restartSeconds,
      long upgraded,
      double wallSeconds,
      List<Double> nodeWallSeconds,
      List<Double> nodeSpanSeconds,
      Map<String, List<Double>> stepSeconds,
      double workerCpuSeconds,
      long workerPeakRssKiB,
      List<Double> scpSeconds,
      List<Double> sftpSeconds) {}

  public static E2eFigures of(Measured m) {
    if (m.nodes() < 1 || m.window() < 1 || m.binaryMiB() < 1) {
      throw new IllegalArgumentException("nodes, window and size must be positive");
    }
    double scpMiBps = m.binaryMiB() / copySeconds("scp", m.scpSeconds());
    double sftpMiBps = m.binaryMiB() / copySeconds("SFTP", m.sftpSeconds());
    double perNodeIdeal = m.restartSeconds() + m.binaryMiB() / scpMiBps;
    double ideal = Math.ceil((double) m.nodes() / m.window()) * perNodeIdeal;
    List<Double> overheads = m.nodeWallSeconds().stream().map(w -> w - perNodeIdeal).toList();
    Map<String, Double> steps = new LinkedHashMap<>();
    m.stepSeconds().forEach((step, times) -> steps.put(step, round(spread(times).median())));
    return new E2eFigures(
        m.hosts(), m.nodes(), m.window(), m.binaryMiB(), m.restartSeconds(), m.upgraded(),
        round(m.wallSeconds()), round(ideal), round(m.wallSeconds() / ideal),
        rounded(spread(overheads)), rounded(spread(m.nodeWallSeconds())), rounded(spread(m.nodeSpanSeconds())), steps,
        round(m.workerCpuSeconds()), round(m.workerCpuSeconds() / m.nodes()), m.workerPeakRssKiB() >> 10,
        round(scpMiBps), round(sftpMiBps), round(sftpMiBps / scpMiBps),
        m.scpSeconds().stream().map(E2eFigures::round).toList(), m.sftpSeconds().stream().map(E2eFigures::round).toList(),
        null);
  }

  /** The median of one side's copy times: at least one round, every time positive. */
  private static double copySeconds(String side, List<Double> rounds) {
    if (rounds.isEmpty() || rounds.stream().anyMatch(s -> !(s > 0))) {
      throw new IllegalArgumentException(side + " needs at least one copy and every copy time positive: " + rounds);
    }
    return spread(rounds).median();
  }

  /** Median (mean of the middle two for an even count) and nearest-rank p95; zeros for no values. */
  static Spread spread(List<Double> values) {
    if (values.isEmpty()) {
      return new Spread(0, 0);
    }
    List<Double> sorted = new ArrayList<>(values);
    Collections.sort(sorted);
    int n = sorted.size();
    double median = n % 2 == 1 ? sorted.get(n / 2) : (sorted.get(n / 2 - 1) + sorted.get(n / 2)) / 2;
    double p95 = sorted.get((int) Math.ceil(0.95 * n) - 1);
    return new Spread(median, p95);
  }

  private static Spread rounded(Spread s) {
    return new Spread(round(s.median()), round(s.p95()));
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
