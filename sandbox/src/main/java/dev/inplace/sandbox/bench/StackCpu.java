package dev.inplace.sandbox.bench;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;

/**
 * Where the CPU of a timed part went, from Linux's {@code /proc}: seconds of the worker, Temporal and
 * the estate (their own threads), of the hosts (every process below the estate: the OpenSSH hosts'
 * sshd, sftp-server, the scripts and their programs, whether still running or already reaped), and
 * the machine's busy and idle seconds. On a machine with little idle time the run is CPU-bound.
 * {@code workerJit}, {@code temporalJit} and {@code estateJit}: the part of each JVM's seconds its JIT
 * compiler threads used (HotSpot's {@code C1 CompilerThread*} and {@code C2 CompilerThread*}), what a
 * JVM in its first minutes spends on compiling rather than on the run's work. The JVM starts and stops
 * compiler threads as its queue grows and shrinks, and a thread that ended between the two readings
 * takes its ticks with it: the JIT's figures are what the compiler threads alive at the end used, a
 * lower bound.
 */
public record StackCpu(double worker, double workerJit, double temporal, double temporalJit, double estate,
    double estateJit, double hosts, double machineBusy, double machineIdle) {

  /** The counters at one moment, in clock ticks; each JVM's JIT by compiler thread ID. */
  record Reading(long worker, Map<Long, Long> workerJit, long temporal, Map<Long, Long> temporalJit, long estate,
      Map<Long, Long> estateJit, long hosts, long machineBusy, long machineIdle) {}

  /** Reads the counters now; a process gone or unreadable counts as nothing. */
  static Reading read(long workerPid, long temporalPid, long estatePid) {
    Map<Long, long[]> processes = processes();
    long[] machine = machineTicks(firstLine(Path.of("/proc/stat")));
    return new Reading(own(processes, workerPid), jitTicks(taskStats(workerPid)), own(processes, temporalPid),
        jitTicks(taskStats(temporalPid)), own(processes, estatePid), jitTicks(taskStats(estatePid)),
        belowTicks(processes, estatePid), machine[0], machine[1]);
  }

  /** What was used between two readings. */
  static StackCpu between(Reading before, Reading after, double ticksPerSecond) {
    return new StackCpu(
        seconds(after.worker() - before.worker(), ticksPerSecond),
        seconds(ticksBetween(before.workerJit(), after.workerJit()), ticksPerSecond),
        seconds(after.temporal() - before.temporal(), ticksPerSecond),
        seconds(ticksBetween(before.temporalJit(), after.temporalJit()), ticksPerSecond),
        seconds(after.estate() - before.estate(), ticksPerSecond),
        seconds(ticksBetween(before.estateJit(), after.estateJit()), ticksPerSecond),
        seconds(after.hosts() - before.hosts(), ticksPerSecond),
        seconds(after.machineBusy() - before.machineBusy(), ticksPerSecond),
        seconds(after.machineIdle() - before.machineIdle(), ticksPerSecond));
  }

  /**
   * What the threads alive at {@code after} used since {@code before}, by thread ID: a thread started
   * in between counts from zero, a thread that ended in between is not in {@code after} (and would
   * otherwise make the difference of two sums negative).
   */
  static long ticksBetween(Map<Long, Long> before, Map<Long, Long> after) {
    long total = 0;
    for (Map.Entry<Long, Long> thread : after.entrySet()) {
      total += Math.max(0, thread.getValue() - before.getOrDefault(thread.getKey(), 0L));
    }
    return total;
  }

  /**
   * Ticks (utime + stime) of the JIT compiler threads among a process's threads, by thread ID, given
   * as their {@code /proc/PID/task/TID/stat} lines. Linux keeps 15 characters of a thread's name:
   * HotSpot's {@code C2 CompilerThread0} reads {@code C2 CompilerThre}.
   */
  static Map<Long, Long> jitTicks(List<String> taskStats) {
    Map<Long, Long> threads = new HashMap<>();
    for (String stat : taskStats) {
      String name = stat.substring(stat.indexOf('(') + 1, stat.lastIndexOf(')'));
      if (name.startsWith("C1 CompilerThre") || name.startsWith("C2 CompilerThre")) {
        long[] f = statFields(stat);
        threads.put(Long.parseLong(stat.substring(0, stat.indexOf(' '))), f[1] + f[2]);
      }
    }
    return threads;
  }

  /** The {@code stat} lines of a process's threads; none for a process gone or unreadable. */
  private static List<String> taskStats(long pid) {
    List<String> stats = new ArrayList<>();
    if (pid <= 0) {
      return stats;
    }
    try (Stream<Path> tasks = Files.list(Path.of("/proc", Long.toString(pid), "task"))) {
      for (Path task : tasks.toList()) {
        try {
          stats.add(Files.readString(task.resolve("stat")));
        } catch (IOException e) {
          // the thread ended while being read
        }
      }
    } catch (IOException e) {
      // the process ended: nothing
    }
    return stats;
  }

  /**
   * Ticks of every process below {@code root}: the root's reaped children (its cutime and cstime)
   * and, for each live descendant, its own ticks and those of the children it reaped. A process that
   * ends between two readings moves into its parent's reaped ticks, so the difference of two
   * readings counts it once.
   *
   * @param processes by PID: parent PID, utime, stime, cutime, cstime
   */
  static long belowTicks(Map<Long, long[]> processes, long root) {
    long[] self = processes.get(root);
    if (self == null) {
      return 0;
    }
    long total = self[3] + self[4];
    for (Map.Entry<Long, long[]> p : processes.entrySet()) {
      if (p.getKey() != root && descendsFrom(processes, p.getKey(), root)) {
        long[] f = p.getValue();
        total += f[1] + f[2] + f[3] + f[4];
      }
    }
    return total;
  }

  private static boolean descendsFrom(Map<Long, long[]> processes, long pid, long root) {
    long at = pid;
    for (int depth = 0; depth < 64; depth++) {
      long[] f = processes.get(at);
      if (f == null || f[0] <= 0) {
        return false;
      }
      if (f[0] == root) {
        return true;
      }
      at = f[0];
    }
    return false;
  }

  /** Parent PID, utime, stime, cutime, cstime from a {@code /proc/PID/stat} line (fields 4, 14-17). */
  static long[] statFields(String stat) {
    String[] f = stat.substring(stat.lastIndexOf(')') + 2).trim().split("\\s+");
    // f[0] is field 3 (state): field 4 is f[1], fields 14-17 are f[11]..f[14].
    return new long[] {Long.parseLong(f[1]), Long.parseLong(f[11]), Long.parseLong(f[12]), Long.parseLong(f[13]),
        Long.parseLong(f[14])};
  }

  /** Busy (user, nice, system, irq, softirq, steal) and idle (idle, iowait) ticks from {@code /proc/stat}'s cpu line. */
  static long[] machineTicks(String cpuLine) {
    String[] f = cpuLine.trim().split("\\s+");
    if (!f[0].equals("cpu")) {
      throw new IllegalArgumentException("not the cpu line of /proc/stat: " + cpuLine);
    }
    long busy = Long.parseLong(f[1]) + Long.parseLong(f[2]) + Long.parseLong(f[3]) + Long.parseLong(f[6])
        + Long.parseLong(f[7]) + (f.length > 8 ? Long.parseLong(f[8]) : 0);
    long idle = Long.parseLong(f[4]) + Long.parseLong(f[5]);
    return new long[] {busy, idle};
  }

  private static long own(Map<Long, long[]> processes, long pid) {
    long[] f = processes.get(pid);
    return f == null ? 0 : f[1] + f[2];
  }

  private static Map<Long, long[]> processes() {
    Map<Long, long[]> processes = new HashMap<>();
    try (Stream<Path> dirs = Files.list(Path.of("/proc"))) {
      for (Path dir : dirs.toList()) {
        String name = dir.getFileName().toString();
        if (name.chars().allMatch(Character::isDigit)) {
          try {
            processes.put(Long.parseLong(name), statFields(Files.readString(dir.resolve("stat"))));
          } catch (IOException | RuntimeException e) {
            // ended while being read: its ticks are in its parent's by the next reading
          }
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot list /proc", e);
    }
    return processes;
  }

  private static String firstLine(Path file) {
    try (Stream<String> lines = Files.lines(file)) {
      return lines.findFirst().orElseThrow();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + file, e);
    }
  }

  private static double seconds(long ticks, double ticksPerSecond) {
    return Math.round(ticks / ticksPerSecond * 100) / 100.0;
  }
}
