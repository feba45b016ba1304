package dev.inplace.sandbox.stack;

import dev.inplace.sandbox.SandboxSlot;
import dev.inplace.sandbox.hosts.HostServer;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The command lines of the stack's processes, in one place. Each JVM carries two system properties that
 * mark it as this stack's ({@code -Dinplace.stack=DIR -Dinplace.stack.role=ROLE}); the Temporal dev
 * server, a Go program that takes no such arguments, is marked by its database in the stack's
 * directory ({@link #devServerMarkers}). {@code down} kills a PID only when its command line still
 * carries them, so a reused PID is never killed.
 */
public final class StackCommands {
  public static final String WORKER_MAIN = "dev.inplace.worker.WorkerMain";

  private StackCommands() {}

  /**
   * A worker process. Configured only through its environment, as the Deployment's pods are. When the
   * runnable jar lands, this becomes {@code java -jar app/target/inplace.jar worker}. {@code jvmOptions}
   * are the stack's own (its class archive, {@link ClassArchives}).
   */
  public static List<String> worker(StackLayout layout, String role, List<String> jvmOptions) {
    return java(layout, role, jvmOptions, "256m", Jit.C1_ONLY, null, WORKER_MAIN);
  }

  /**
   * A worker process that runs with the JVM's own compilers and collector and the image's JVM options
   * ({@code deploy/image/java.options}), as the image's entrypoint does ({@link Jit#AS_SHIPPED}): what a
   * benchmark of the worker measures.
   */
  public static List<String> workerAsShipped(StackLayout layout, String role, List<String> jvmOptions) {
    return java(layout, role, jvmOptions, "256m", Jit.AS_SHIPPED, null, WORKER_MAIN);
  }

  /** Temporal's test server on loopback (see {@link TemporalServerMain}). */
  public static List<String> temporal(StackLayout layout, List<String> jvmOptions) {
    List<String> command =
        java(layout, StackLayout.TEMPORAL, jvmOptions, "384m", Jit.C1_ONLY, "logback-sandbox.xml",
            TemporalServerMain.class.getName());
    command.add(Integer.toString(StackLayout.TEMPORAL_PORT));
    return command;
  }

  /**
   * The real Temporal server, as the Temporal CLI runs it for development ({@code temporal server
   * start-dev}): the frontend on the stack's Temporal port, the Web UI on {@code uiPort}, histories and
   * visibility in SQLite at {@link StackLayout#temporalDatabase()}, the {@code default} namespace,
   * warnings and errors only, as JSON lines, in its log, and none of the caller's CLI profiles. Its
   * HTTP API and metrics take free ports of its own choosing (loopback, like everything it binds).
   */
  public static List<String> temporalDevServer(StackLayout layout, Path binary, int port, int uiPort) {
    List<String> command = new ArrayList<>(List.of(binary.toString(), "server", "start-dev",
        "--ip", "127.0.0.1",
        "--port", Integer.toString(port),
        "--ui-port", Integer.toString(uiPort)));
    command.addAll(devServerMarkers(layout));
    command.addAll(List.of("--namespace", "default", "--log-level", "warn", "--log-format", "json", "--color", "never",
        // Unattended and the same for everyone: no temporal.yaml / temporal.toml profile of the caller's.
        "--disable-config-file", "--disable-config-env"));
    return command;
  }

  /** What marks the stack's dev server: its database, in the stack's directory. */
  static List<String> devServerMarkers(StackLayout layout) {
    return List.of("--db-filename", layout.temporalDatabase().toString());
  }

  /**
   * The simulated estate; {@code estateArgs} are the demo's estate options. With MINA hosts (the
   * default) the estate's JVM is every node's SSH server, and its AES-GCM reaches the CPU's AES
   * instructions only once C2 has compiled it: both compilers ({@link Jit#TIERED}). With OpenSSH
   * hosts sshd does that, and the kubelet simulator hashes the binaries a node starts with openssl
   * ({@code BinaryDigest}): C1 only, as the others, since C2 then compiled nothing the estate needed
   * (3.5 of its 6.3 CPU-s in the timed part of {@code bench --e2e --hosts openssh}, docs/benchmarks.md).
   */
  public static List<String> estate(StackLayout layout, List<String> estateArgs, List<String> jvmOptions) {
    Jit jit = opensshHosts(estateArgs) ? Jit.C1_ONLY : Jit.TIERED;
    List<String> command = java(layout, StackLayout.ESTATE, jvmOptions, "512m", jit, "logback-sandbox.xml",
        EstateMain.class.getName());
    command.add("--dir");
    command.add(layout.dir().toString());
    command.addAll(estateArgs);
    return command;
  }

  /**
   * Whether the estate's options ask for OpenSSH hosts: the last {@code --hosts} wins, as in
   * {@code DemoOptions}, and anything but {@code openssh} is MINA here (the estate refuses a bad value
   * itself, with its reason).
   */
  static boolean opensshHosts(List<String> estateArgs) {
    int at = estateArgs.lastIndexOf("--hosts");
    return at >= 0 && at + 1 < estateArgs.size() && estateArgs.get(at + 1).equals(HostServer.OPENSSH.cliName());
  }

  /**
   * The worker's JVM options as the image's entrypoint passes them ({@code deploy/image/java.options},
   * which the build copies beside this class): java's argfile syntax, {@code #} comment lines.
   */
  static List<String> imageJavaOptions() {
    try (InputStream in = StackCommands.class.getResourceAsStream("java.options")) {
      if (in == null) {
        throw new IllegalStateException("java.options (deploy/image) is not on the sandbox's classpath: rebuild it");
      }
      List<String> options = new ArrayList<>();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        String option = line.strip();
        if (!option.isEmpty() && !option.startsWith("#")) {
          options.addAll(List.of(option.split("\\s+")));
        }
      }
      return List.copyOf(options);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Marks this stack's processes: {@code down} checks them before it kills. */
  static List<String> markers(StackLayout layout, String role) {
    return List.of("-Dinplace.stack=" + layout.dir(), "-Dinplace.stack.role=" + role);
  }

  /** Which JIT compilers a process runs with. */
  enum Jit {
    /** C1 only ({@code -XX:TieredStopAtLevel=1}). */
    C1_ONLY,
    /** The JVM's default: C1, then C2 for hot code. */
    TIERED,
    /**
     * The JVM's defaults for compilers and collector alike, plus the image's JVM options, as the image
     * runs the worker: without C2 a benchmarked worker's SSH ciphers and hashing would run without the
     * CPU's intrinsics.
     */
    AS_SHIPPED
  }

  private static List<String> java(StackLayout layout, String role, List<String> jvmOptions, String heap, Jit jit,
      String logConfig, String main) {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(markers(layout, role));
    command.addAll(SandboxSlot.jvmArguments());
    command.addAll(jvmOptions);
    command.add("-Xmx" + heap);
    if (jit != Jit.AS_SHIPPED) {
      command.add("-XX:+UseSerialGC");
    } else {
      command.addAll(imageJavaOptions());
    }
    // C1 only: the stack's JVMs live for seconds to minutes on two shared cores, where C2's
    // compilations cost more CPU than they give back (a chaos campaign: 185 -> 138 CPU-s, the same
    // wall time; docs/benchmarks.md). What the processes do is the same either way.
    if (jit == Jit.C1_ONLY) {
      command.add("-XX:TieredStopAtLevel=1");
    }
    if (logConfig != null) {
      command.add("-Dlogback.configurationFile=" + logConfig);
    }
    command.add("-cp");
    command.add(String.join(File.pathSeparator, classpath()));
    command.add(main);
    return command;
  }

  /**
   * This JVM's classpath, absolute, so the processes run the same build from any directory; without
   * test classes ({@code target/test-classes} of a test run): the stack runs the product and the
   * sandbox, never a test, and a classpath of jars only can have class archives ({@link ClassArchives}).
   */
  static List<String> classpath() {
    List<String> entries = new ArrayList<>();
    for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
      if (!entry.isEmpty()) {
        Path path = Path.of(entry).toAbsolutePath().normalize();
        if (!(path.endsWith("test-classes") && Files.isDirectory(path))) {
          entries.add(path.toString());
        }
      }
    }
    return entries;
  }
}
