package dev.inplace.sandbox.stack;

import dev.inplace.sandbox.demo.DemoOptions;
import java.io.PrintStream;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** {@code ./inplace up} and {@code ./inplace down}: the local stack in {@code .sandbox/stack/}. */
public final class StackMain {
  /** The stack directory, relative to the repository root the launcher runs in. */
  public static final Path DEFAULT_DIR = Path.of(".sandbox", "stack");

  /** Estate options {@code up} passes to the estate as the demo would (with a value each, except none). */
  private static final Set<String> ESTATE_OPTIONS = Set.of(
      "--control-planes", "--pools", "--distribution", "--from", "--to", "--fail", "--binary-size-mib",
      "--max-unavailable", "--drain-timeout", "--ready-timeout", "--hosts", "--restart-seconds");

  public static final String UP_USAGE =
      """
      usage: inplace up [options]      start the local stack of processes (docs/local-stack.md)
        --workers N            worker processes (default 2)
        --temporal SERVER      test-server (default): Temporal's Java test server, in memory;
                               dev-server: the real Temporal server (temporal server start-dev, built by
                               ./inplace testbed build temporal), its database DIR/temporal.db, its Web UI
                               on 127.0.0.1:8233
        --pool-size N          worker nodes per MachineDeployment (the demo's --workers; default 3)
        --control-planes N, --pools N, --distribution k3s|kubeadm, --from V, --to V, --fail NODE:STEP,
        --binary-size-mib N, --max-unavailable N, --drain-timeout S, --ready-timeout S, --restart-seconds S,
        --hosts mina|openssh
                               the estate, as for ./inplace demo
        --dir DIR              stack directory (default .sandbox/stack)
      usage: inplace down [--dir DIR]  stop exactly the processes `up` started
      usage: inplace apply-demo-crs [-f FILE] [--dir DIR]
                               apply a ControlPlaneUpgrade and/or WorkersUpgrade (default: the stack's
                               upgrade.yaml) to the estate's management API server; kubectl cannot
                               (the simulated API server has no discovery or OpenAPI documents)
      """;

  private StackMain() {}

  public static int main(String command, List<String> args, PrintStream out, PrintStream err) {
    if (args.contains("--help")) {
      out.print(UP_USAGE);
      return 0;
    }
    try {
      return switch (command) {
        case "up" -> up(args, out);
        case "down" -> down(args, out);
        default -> applyDemoCrs(args, out);
      };
    } catch (IllegalArgumentException e) {
      err.println("inplace " + command + ": " + e.getMessage());
      err.print(UP_USAGE);
      return 2;
    } catch (LocalStack.StackException | java.io.IOException | java.io.UncheckedIOException e) {
      err.println("inplace " + command + ": " + e.getMessage());
      return 1;
    }
  }

  private static int up(List<String> args, PrintStream out) {
    int workers = 2;
    TemporalServer temporal = TemporalServer.TEST_SERVER;
    Path dir = DEFAULT_DIR;
    List<String> estateArgs = new ArrayList<>();
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (i + 1 >= args.size() || args.get(i + 1).startsWith("--")) {
        throw new IllegalArgumentException(ESTATE_OPTIONS.contains(arg) || Set.of("--workers", "--pool-size", "--dir", "--temporal").contains(arg)
            ? arg + " needs a value" : "unknown option '" + arg + "'");
      }
      String value = args.get(++i);
      switch (arg) {
        case "--workers" -> workers = number(arg, value);
        case "--pool-size" -> estateArgs.addAll(List.of("--workers", value));
        case "--dir" -> dir = Path.of(value);
        case "--temporal" -> temporal = TemporalServer.parse(value);
        default -> {
          if (!ESTATE_OPTIONS.contains(arg)) {
            throw new IllegalArgumentException("unknown option '" + arg + "'");
          }
          estateArgs.addAll(List.of(arg, value));
        }
      }
    }
    DemoOptions.parse(estateArgs.toArray(String[]::new)); // refuses bad estate options before anything starts
    StackLayout layout = new StackLayout(dir);
    out.println("inplace up: starting Temporal's " + (temporal == TemporalServer.DEV_SERVER ? "dev server" : "test server")
        + ", the estate and " + workers + " worker process" + (workers == 1 ? "" : "es") + " in " + layout.dir());
    LocalStack.up(layout, new LocalStack.Spec(workers, estateArgs, true, true, temporal), out);
    out.println();
    out.println("The stack is up. For the CLI and kubectl in another shell:");
    out.println();
    out.print(LocalStack.exports(layout));
    out.println();
    out.println("Start the default demo's upgrade by applying its resources (" + layout.demoResources() + "):");
    out.println("  ./inplace apply-demo-crs");
    out.println("It prints the runs' IDs for ./inplace status ID and ./inplace watch ID.");
    if (temporal == TemporalServer.DEV_SERVER) {
      out.println("Temporal's Web UI: " + StackLayout.temporalUiUrl() + " (runs are found by InplaceCluster,"
          + " InplaceKind, InplacePhase ...); its database: " + layout.temporalDatabase());
    }
    out.println("Logs in " + layout.logs() + "; stop everything with ./inplace down");
    return 0;
  }

  private static int down(List<String> args, PrintStream out) {
    Path dir = DEFAULT_DIR;
    for (int i = 0; i < args.size(); i++) {
      if ("--dir".equals(args.get(i)) && i + 1 < args.size()) {
        dir = Path.of(args.get(++i));
      } else {
        throw new IllegalArgumentException("unknown option '" + args.get(i) + "'");
      }
    }
    List<String> stopped = LocalStack.down(new StackLayout(dir));
    out.println(stopped.isEmpty() ? "inplace down: no stack process running in " + dir : "inplace down: stopped " + String.join(", ", stopped));
    return 0;
  }

  private static int applyDemoCrs(List<String> args, PrintStream out) throws java.io.IOException {
    Path dir = DEFAULT_DIR;
    Path file = null;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      if (("--dir".equals(arg) || "-f".equals(arg)) && i + 1 < args.size()) {
        Path value = Path.of(args.get(++i));
        if ("--dir".equals(arg)) {
          dir = value;
        } else {
          file = value;
        }
      } else {
        throw new IllegalArgumentException("unknown option '" + arg + "'");
      }
    }
    StackLayout layout = new StackLayout(dir);
    if (!java.nio.file.Files.isRegularFile(layout.estateDescription())) {
      throw new LocalStack.StackException("no stack is up in " + layout.dir() + "; start one with ./inplace up");
    }
    Path resources = file == null ? layout.demoResources() : file;
    try (RemoteEstate estate = RemoteEstate.open(layout)) {
      for (String applied : StackResources.apply(estate.management(), java.nio.file.Files.readString(resources))) {
        out.println(applied);
      }
      // The worker's watcher starts the runs and writes their IDs into the resources' status.
      for (String id : StackResources.awaitWorkflowIds(estate.management(), java.time.Duration.ofSeconds(60))) {
        out.println("run " + id + "   (./inplace watch " + id + ")");
      }
      out.println("The WorkersUpgrade's runs start once the control plane is done; their IDs appear in its status.");
    }
    return 0;
  }

  private static int number(String flag, String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a whole number, got '" + text + "'");
    }
  }
}
