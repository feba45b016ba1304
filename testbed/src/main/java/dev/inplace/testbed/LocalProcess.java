package dev.inplace.testbed;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One test-bed component running as an OS process, its output in {@code <name>.log}: started with
 * its command line, awaited until a readiness probe passes, stopped (TERM, then KILL) or killed.
 */
public final class LocalProcess implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(LocalProcess.class);

  private final String name;
  private final List<String> command;
  private final Map<String, String> environment;
  private final Path logFile;
  private Process process;

  private LocalProcess(String name, List<String> command, Map<String, String> environment, Path logFile) {
    this.name = name;
    this.command = List.copyOf(command);
    this.environment = Map.copyOf(environment);
    this.logFile = logFile;
  }

  /** Starts {@code command}, appending its output to {@code dir/<name>.log}. */
  public static LocalProcess start(String name, List<String> command, Path dir) {
    return start(name, command, Map.of(), dir);
  }

  /** As {@link #start(String, List, Path)}, with {@code environment} added to this JVM's. */
  public static LocalProcess start(String name, List<String> command, Map<String, String> environment, Path dir) {
    LocalProcess p = new LocalProcess(name, command, environment, dir.resolve(name + ".log"));
    p.launch();
    return p;
  }

  private void launch() {
    try {
      Files.createDirectories(logFile.getParent());
      ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true)
          .redirectOutput(ProcessBuilder.Redirect.appendTo(logFile.toFile()));
      builder.environment().putAll(environment);
      process = builder.start();
      log.debug("started {} (pid {}): {}", name, process.pid(), command);
    } catch (IOException e) {
      throw new IllegalStateException("cannot start " + name + ": " + command.get(0), e);
    }
  }

  /** Waits until {@code ready} holds; fails with the log's tail if the process exits or time runs out. */
  public void awaitReady(BooleanSupplier ready, Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (!process.isAlive()) {
        throw new IllegalStateException(name + " exited with " + process.exitValue() + " before it was ready:\n" + tail());
      }
      if (ready.getAsBoolean()) {
        return;
      }
      sleep(100);
    }
    throw new IllegalStateException(name + " was not ready within " + timeout + ":\n" + tail());
  }

  /** The last lines of the process's log. */
  public String tail() {
    try {
      List<String> lines = Files.readAllLines(logFile);
      return String.join("\n", lines.subList(Math.max(0, lines.size() - 30), lines.size()));
    } catch (IOException e) {
      return "(no log: " + e.getMessage() + ")";
    }
  }

  public boolean isAlive() {
    return process.isAlive();
  }

  public Path logFile() {
    return logFile;
  }

  /** kill -9, as a crash: no shutdown of its own. */
  public void kill() {
    process.destroyForcibly();
    waitFor(Duration.ofSeconds(10));
  }

  /** Starts the same command line again (after {@link #kill} or {@link #close}). */
  public void restart() {
    if (process.isAlive()) {
      throw new IllegalStateException(name + " is still running");
    }
    launch();
  }

  @Override
  public void close() {
    if (process == null || !process.isAlive()) {
      return;
    }
    process.destroy();
    if (!waitFor(Duration.ofSeconds(10))) {
      process.destroyForcibly();
      waitFor(Duration.ofSeconds(10));
    }
  }

  private boolean waitFor(Duration timeout) {
    try {
      return process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return false;
    }
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }
}
