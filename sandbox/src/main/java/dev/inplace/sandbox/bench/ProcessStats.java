package dev.inplace.sandbox.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * CPU time and peak RSS of another process, from Linux's {@code /proc/PID/stat} (utime + stime, in
 * clock ticks) and {@code /proc/PID/status} ({@code VmHWM}, the resident set's high-water mark).
 */
public final class ProcessStats {
  private final long pid;
  private final double ticksPerSecond;

  public ProcessStats(long pid) {
    this.pid = pid;
    this.ticksPerSecond = clockTicks();
  }

  /** User plus system CPU seconds the process has used so far. */
  public double cpuSeconds() {
    return cpuTicks(read("stat")) / ticksPerSecond;
  }

  /** Peak resident set in KiB. */
  public long peakRssKiB() {
    return peakRssKiB(read("status"));
  }

  /** utime + stime from a {@code stat} line: fields 14 and 15, counted after the parenthesised name. */
  static long cpuTicks(String stat) {
    long[] fields = StackCpu.statFields(stat);
    return fields[1] + fields[2];
  }

  static long peakRssKiB(String status) {
    for (String line : status.split("\n")) {
      if (line.startsWith("VmHWM:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    throw new IllegalStateException("no VmHWM line in /proc/PID/status");
  }

  private String read(String file) {
    try {
      return Files.readString(Path.of("/proc", Long.toString(pid), file));
    } catch (IOException e) {
      throw new UncheckedIOException("process " + pid + " is gone or unreadable", e);
    }
  }

  /** {@code getconf CLK_TCK}; Linux's USER_HZ is 100 wherever that is unavailable. */
  static double clockTicks() {
    try {
      Process p = new ProcessBuilder("getconf", "CLK_TCK").redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes()).trim();
      return p.waitFor() == 0 ? Double.parseDouble(out) : 100;
    } catch (IOException | NumberFormatException e) {
      return 100;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return 100;
    }
  }
}
