package dev.inplace.sandbox.chaos;

import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.stack.TemporalServer;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * {@code ./inplace chaos}'s command line, parsed strictly. The estate is the demo's: {@code nodes} are
 * 3 control planes and the rest workers in up to 3 MachineDeployments of equal size.
 *
 * @param seed every random choice of the campaign (kill instants, targets, restarts, SSH faults) follows it
 * @param deadlineSeconds both runs must be terminal within this (a stuck run fails the campaign)
 * @param temporal the Temporal server of the stack
 * @param temporalKills how many times the Temporal server is killed with SIGKILL mid-run and started
 *     again on the same database (the dev server only: the test server keeps its state in memory)
 */
public record ChaosOptions(
    int nodes,
    int kills,
    int workers,
    long seed,
    int sshDropPercent,
    int sshHangPercent,
    List<String> faults,
    boolean json,
    String distribution,
    long deadlineSeconds,
    boolean keep,
    TemporalServer temporal,
    int temporalKills) {

  public static final int CONTROL_PLANES = 3;

  public static final String USAGE =
      """
      usage: inplace chaos [options]   upgrade the local stack of processes while killing its workers
        --nodes N              nodes: 3 control planes, the rest workers in up to 3 MachineDeployments
                               of equal size (default 30: 3 + 3 x 9)
        --kills K              worker processes killed with SIGKILL during the upgrade (default 50)
        --workers W            worker processes (default 2)
        --seed S               the campaign's seed (default: random, printed); a failing seed reproduces
        --ssh-drop PCT         SSH connections dropped mid-transfer or mid-command (default 0)
        --ssh-hang PCT         SSH commands that never return (default 0)
        --fail NODE:STEP       make a node fail at a step, as in the demo (repeatable); it is skipped
                               after its rollback and must end on its previous version, schedulable
        --distribution D       k3s (default), kubeadm or k0s
        --deadline S           seconds both runs have to end (default 1800)
        --temporal SERVER      test-server (default): Temporal's Java test server; dev-server: the real
                               server (temporal server start-dev, ./inplace testbed build temporal)
        --kill-temporal N      with --temporal dev-server: kill the server with SIGKILL N times mid-run,
                               each time starting it again on the same database and ports (default 0)
        --json                 end with one JSON line: the campaign's figures and invariants
        --keep                 keep the stack directory for inspection
      Exit 0 only if every invariant holds (docs/reliability.md).
      """;

  public ChaosOptions {
    faults = List.copyOf(faults);
  }

  public static ChaosOptions parse(String... args) {
    int nodes = 30;
    int kills = 50;
    int workers = 2;
    Long seed = null;
    int drop = 0;
    int hang = 0;
    List<String> faults = new ArrayList<>();
    boolean json = false;
    boolean keep = false;
    String distribution = "k3s";
    long deadline = 1800;
    TemporalServer temporal = TemporalServer.TEST_SERVER;
    int temporalKills = 0;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--nodes" -> nodes = number(arg, value(args, ++i, arg));
        case "--kills" -> kills = number(arg, value(args, ++i, arg));
        case "--workers" -> workers = number(arg, value(args, ++i, arg));
        case "--seed" -> seed = seed(value(args, ++i, arg));
        case "--ssh-drop" -> drop = percent(arg, value(args, ++i, arg));
        case "--ssh-hang" -> hang = percent(arg, value(args, ++i, arg));
        case "--fail" -> faults.add(value(args, ++i, arg));
        case "--distribution" -> distribution = value(args, ++i, arg);
        case "--deadline" -> deadline = number(arg, value(args, ++i, arg));
        case "--json" -> json = true;
        case "--keep" -> keep = true;
        case "--temporal" -> temporal = TemporalServer.parse(value(args, ++i, arg));
        case "--kill-temporal" -> temporalKills = number(arg, value(args, ++i, arg));
        default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
      }
    }
    if (nodes < CONTROL_PLANES + 1) {
      throw new IllegalArgumentException("--nodes must be at least " + (CONTROL_PLANES + 1) + " (3 control planes and a worker), got " + nodes);
    }
    int pools = pools(nodes);
    if ((nodes - CONTROL_PLANES) % pools != 0) {
      throw new IllegalArgumentException("--nodes " + nodes + ": the " + (nodes - CONTROL_PLANES)
          + " workers do not split evenly into " + pools + " MachineDeployments; use 3 + a multiple of " + pools);
    }
    if (kills < 0) {
      throw new IllegalArgumentException("--kills must be 0 or more, got " + kills);
    }
    if (temporalKills < 0) {
      throw new IllegalArgumentException("--kill-temporal must be 0 or more, got " + temporalKills);
    }
    if (temporalKills > 0 && temporal != TemporalServer.DEV_SERVER) {
      throw new IllegalArgumentException("--kill-temporal needs --temporal dev-server: the test server keeps its"
          + " histories in memory, so killing it loses every run");
    }
    if (workers < 1 || workers > 9) {
      throw new IllegalArgumentException("--workers must be 1..9 worker processes, got " + workers);
    }
    if (drop + hang > 50) {
      throw new IllegalArgumentException("--ssh-drop and --ssh-hang together must stay at or under 50%");
    }
    if (deadline < 60) {
      throw new IllegalArgumentException("--deadline must be at least 60 seconds, got " + deadline);
    }
    ChaosOptions options = new ChaosOptions(nodes, kills, workers, seed == null ? new Random().nextLong() : seed,
        drop, hang, faults, json, distribution, deadline, keep, temporal, temporalKills);
    options.demoOptions(); // the demo's own checks: distribution, fault syntax and steps
    return options;
  }

  /** MachineDeployments: 3, or as many as there are workers when fewer. */
  static int pools(int nodes) {
    return Math.min(3, nodes - CONTROL_PLANES);
  }

  public int pools() {
    return pools(nodes);
  }

  public int workersPerPool() {
    return (nodes - CONTROL_PLANES) / pools();
  }

  /**
   * The demo's arguments for this estate: a failed node is skipped after its rollback, so the rest of
   * its MachineDeployment goes on (the campaign's operator).
   */
  public List<String> demoArgs() {
    List<String> args = new ArrayList<>(List.of(
        "--control-planes", Integer.toString(CONTROL_PLANES),
        "--pools", Integer.toString(pools()),
        "--workers", Integer.toString(workersPerPool()),
        "--distribution", distribution,
        "--on-failure", "skip",
        "--binary-size-mib", "8"));
    for (String fault : faults) {
      args.addAll(List.of("--fail", fault));
    }
    return args;
  }

  public DemoOptions demoOptions() {
    return DemoOptions.parse(demoArgs().toArray(String[]::new));
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length || args[i].startsWith("--")) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args[i];
  }

  private static int number(String flag, String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a whole number, got '" + text + "'");
    }
  }

  private static long seed(String text) {
    try {
      return Long.parseLong(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("--seed needs a whole number, got '" + text + "'");
    }
  }

  private static int percent(String flag, String text) {
    int value = number(flag, text);
    if (value < 0 || value > 100) {
      throw new IllegalArgumentException(flag + " must be a percentage 0..100, got " + value);
    }
    return value;
  }
}
