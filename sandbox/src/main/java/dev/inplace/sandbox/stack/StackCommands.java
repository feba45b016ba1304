package dev.inplace.sandbox.stack;

import dev.inplace.sandbox.SandboxSlot;
import java.io.File;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command lines of the stack's processes, in one place. Each carries two system properties that
 * mark it as this stack's ({@code -Dinplace.stack=DIR -Dinplace.stack.role=ROLE}): {@code down}
 * kills a PID only when its command line still carries them, so a reused PID is never killed.
 */
public final class StackCommands {
  public static final String WORKER_MAIN = "dev.inplace.worker.WorkerMain";

  private StackCommands() {}

  /**
   * A worker process. Configured only through its environment, as the Deployment's pods are. When the
   * runnable jar lands, this becomes {@code java -jar app/target/inplace.jar worker}.
   */
  public static List<String> worker(StackLayout layout, String role) {
    return java(layout, role, "256m", null, WORKER_MAIN);
  }

  /** Temporal's test server on loopback (see {@link TemporalServerMain}). */
  public static List<String> temporal(StackLayout layout) {
    List<String> command =
        java(layout, StackLayout.TEMPORAL, "384m", "logback-sandbox.xml", TemporalServerMain.class.getName());
    command.add(Integer.toString(StackLayout.TEMPORAL_PORT));
    return command;
  }

  /** The simulated estate; {@code estateArgs} are the demo's estate options. */
  public static List<String> estate(StackLayout layout, List<String> estateArgs) {
    List<String> command =
        java(layout, StackLayout.ESTATE, "512m", "logback-sandbox.xml", EstateMain.class.getName());
    command.add("--dir");
    command.add(layout.dir().toString());
    command.addAll(estateArgs);
    return command;
  }

  /** Marks this stack's processes: {@code down} checks them before it kills. */
  static List<String> markers(StackLayout layout, String role) {
    return List.of("-Dinplace.stack=" + layout.dir(), "-Dinplace.stack.role=" + role);
  }

  private static List<String> java(StackLayout layout, String role, String heap, String logConfig, String main) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(markers(layout, role));
    command.addAll(SandboxSlot.jvmArguments());
    command.add("-Xmx" + heap);
    command.add("-XX:+UseSerialGC");
    if (logConfig != null) {
      command.add("-Dlogback.configurationFile=" + logConfig);
    }
    command.add("-cp");
    command.add(classpath());
    command.add(main);
    return command;
  }

  /** This JVM's classpath, absolute, so the processes run the same build from any directory. */
  private static String classpath() {
    List<String> entries = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!entry.isEmpty()) {
        entries.add(Path.of(entry).toAbsolutePath().normalize().toString());
      }
    }
    return String.join(File.pathSeparator, entries);
  }
}
