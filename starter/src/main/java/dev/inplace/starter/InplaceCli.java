package dev.inplace.starter;

import dev.inplace.client.TemporalConnection;
import dev.inplace.client.TemporalSettings;
import dev.inplace.client.UpgradeRuns;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.UpgradeControls;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowException;
import io.temporal.client.WorkflowStub;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The {@code inplace} command line: starts ControlPlaneUpgrade and WorkersUpgrade runs, shows and
 * follows their progress, and sends the operator Updates. Talks only to Temporal (client side).
 */
public final class InplaceCli {
  static final String USAGE =
      """
      usage: inplace <command> ...
        upgrade controlplane --cluster NS/NAME --version V --catalogue FILE --ssh-user U
                             --ssh-key-secret S --known-hosts-secret S [--ssh-port 22]
                             [--distribution k3s|kubeadm] [--arch amd64] [--drain-timeout 300]
                             [--ready-timeout 300] [--soak 0]
        upgrade workers      (the same options) --machine-deployment MD [--max-unavailable 1|N%]
                             [--on-failure halt|continue] [--max-failures 0]
        status ID            a run's progress (ID of a cp-upgrade/, workers-upgrade/ or node-upgrade/ run)
        watch ID             follow a run until it ends
        pause ID | resume ID | abort ID
        retry ID NODE | skip ID NODE
        max-unavailable ID N|N%
      Connection: TEMPORAL_ADDRESS (host:port, required), TEMPORAL_NAMESPACE (default "default"),
      TEMPORAL_API_KEY or TEMPORAL_TLS_CERT + TEMPORAL_TLS_KEY, INPLACE_TASK_QUEUE (default "inplace").
      """;

  private static final Set<String> UPGRADE_FLAGS =
      Set.of("--cluster", "--version", "--catalogue", "--ssh-user", "--ssh-port", "--ssh-key-secret",
          "--known-hosts-secret", "--jump-host", "--distribution", "--arch", "--drain-timeout", "--ready-timeout",
          "--soak", "--machine-deployment", "--max-unavailable", "--on-failure", "--max-failures");

  private final WorkflowClient client;
  private final String taskQueue;
  private final PrintStream out;
  private final long pollMillis;

  InplaceCli(WorkflowClient client, String taskQueue, PrintStream out, long pollMillis) {
    this.client = client;
    this.taskQueue = taskQueue;
    this.out = out;
    this.pollMillis = pollMillis;
  }

  public static void main(String[] args) {
    System.exit(run(Arrays.asList(args), System.getenv(), System.out, System.err));
  }

  /** Runs one command; 0 on success, 1 when the command failed, 2 for a usage error. */
  static int run(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    if (args.isEmpty() || args.contains("--help") || args.get(0).equals("help")) {
      out.print(USAGE);
      return args.isEmpty() ? 2 : 0;
    }
    TemporalSettings settings;
    try {
      settings = TemporalSettings.fromEnvironment(env, warning -> err.println("inplace: warning: " + warning));
      settings.stubsOptions(); // reads the TLS files now: a bad one is a usage error, not a crash
    } catch (IllegalArgumentException e) {
      err.println("inplace: " + e.getMessage());
      return 2;
    }
    if (settings.address().isEmpty()) {
      err.println("inplace: set TEMPORAL_ADDRESS to the Temporal frontend (host:port) the worker uses,"
          + " or an address in the temporal CLI's profile file");
      return 2;
    }
    try (TemporalConnection temporal = TemporalConnection.connect(settings)) {
      return new InplaceCli(temporal.client(), env.getOrDefault("INPLACE_TASK_QUEUE", WorkflowIds.TASK_QUEUE), out, 1000)
          .execute(args, err);
    }
  }

  int execute(List<String> args, PrintStream err) {
    try {
      String command = args.get(0);
      List<String> rest = args.subList(1, args.size());
      switch (command) {
        case "upgrade" -> upgrade(rest);
        case "status" -> status(CliArgs.parse(rest, Set.of()).positional(0, "workflow ID"));
        case "watch" -> watch(CliArgs.parse(rest, Set.of()).positional(0, "workflow ID"));
        case "pause" -> control(rest, 1, (c, a) -> c.pause());
        case "resume" -> control(rest, 1, (c, a) -> c.resume());
        case "abort" -> control(rest, 1, (c, a) -> c.abort());
        case "retry" -> control(rest, 2, (c, a) -> c.retryNode(a));
        case "skip" -> control(rest, 2, (c, a) -> c.skipNode(a));
        case "max-unavailable" -> control(rest, 2, (c, a) -> c.setMaxUnavailable(a));
        default -> throw new CliException("unknown command '" + command + "'");
      }
      return 0;
    } catch (CliException e) {
      err.println("inplace: " + e.getMessage());
      err.print(USAGE);
      return 2;
    } catch (WorkflowException | IllegalArgumentException | IllegalStateException e) {
      err.println("inplace: " + rootMessage(e));
      return 1;
    }
  }

  private void upgrade(List<String> args) {
    CliArgs a = CliArgs.parse(args, UPGRADE_FLAGS);
    String what = a.positional(0, "what to upgrade (controlplane or workers)");
    ClusterRef cluster = cluster(a.required("--cluster"));
    NodeUpgradeTemplate template = template(a);
    switch (what) {
      case "controlplane" -> {
        UpgradeRuns.startControlPlane(client, taskQueue,
            new ControlPlaneUpgradeRequest(cluster, template, a.number("--soak", 0), null));
        out.println("started " + WorkflowIds.controlPlaneUpgrade(cluster.namespace(), cluster.name(), template.targetVersion()));
      }
      case "workers" -> {
        String md = a.required("--machine-deployment");
        FailurePolicy policy = switch (a.optional("--on-failure", "halt").toLowerCase(Locale.ROOT)) {
          case "halt" -> FailurePolicy.HALT;
          case "continue" -> FailurePolicy.CONTINUE;
          default -> throw new CliException("--on-failure must be halt or continue");
        };
        UpgradeRuns.startWorkers(client, taskQueue, new WorkersUpgradeRequest(cluster, md, template,
            a.optional("--max-unavailable", "1"), policy, (int) a.number("--max-failures", 0), a.number("--soak", 0), null, null));
        out.println("started " + WorkflowIds.workersUpgrade(cluster.namespace(), cluster.name(), md, template.targetVersion()));
      }
      default -> throw new CliException("upgrade what? controlplane or workers, not '" + what + "'");
    }
  }

  private NodeUpgradeTemplate template(CliArgs a) {
    String version = a.required("--version");
    Distribution distribution = switch (a.optional("--distribution", "k3s").toLowerCase(Locale.ROOT)) {
      case "k3s" -> Distribution.K3S;
      case "kubeadm" -> Distribution.KUBEADM;
      default -> throw new CliException("--distribution must be k3s or kubeadm");
    };
    String arch = a.optional("--arch", "amd64");
    Path catalogue = Path.of(a.required("--catalogue"));
    ReleaseCatalogue.Release release;
    try {
      release = ReleaseCatalogue.parse(Files.readString(catalogue), catalogue.toString()).find(version, distribution, arch);
    } catch (IOException e) {
      throw new CliException("cannot read the catalogue " + catalogue + ": " + e.getMessage());
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage());
    }
    try {
      SshSettings ssh = new SshSettings(a.required("--ssh-user"), (int) a.number("--ssh-port", 22),
          a.required("--ssh-key-secret"), a.required("--known-hosts-secret"), a.optional("--jump-host", null));
      DrainOptions drain = new DrainOptions(a.number("--drain-timeout", 300), true, false, PdbBlockedAction.FAIL, false);
      return new NodeUpgradeTemplate(distribution, version, release.artifacts(),
          HostProfile.k3sDefaults(), ssh, drain, a.number("--ready-timeout", 300), 0, arch);
    } catch (IllegalArgumentException e) {
      throw new CliException(e.getMessage());
    }
  }

  private static ClusterRef cluster(String text) {
    String[] parts = text.split("/");
    if (parts.length != 2) {
      throw new CliException("--cluster needs NAMESPACE/NAME, got '" + text + "'");
    }
    try {
      return new ClusterRef(parts[0], parts[1]);
    } catch (IllegalArgumentException e) {
      throw new CliException("--cluster: " + e.getMessage());
    }
  }

  /** An Update on a parent run: ID first, then (for retry/skip/max-unavailable) one argument. */
  private void control(List<String> args, int arity, java.util.function.BiFunction<UpgradeControls, String, String> update) {
    CliArgs a = CliArgs.parse(args, Set.of());
    String id = a.positional(0, "workflow ID");
    String argument = arity == 2 ? a.positional(1, "argument") : null;
    if (a.positional.size() > arity) {
      throw new CliException("too many arguments");
    }
    out.println(update.apply(controls(id), argument));
  }

  private UpgradeControls controls(String id) {
    if (id.startsWith("cp-upgrade/")) {
      return client.newWorkflowStub(ControlPlaneUpgradeWorkflow.class, id);
    }
    if (id.startsWith("workers-upgrade/")) {
      return client.newWorkflowStub(WorkersUpgradeWorkflow.class, id);
    }
    throw new CliException("'" + id + "' is not a cp-upgrade/ or workers-upgrade/ workflow ID");
  }

  private void status(String id) {
    if (id.startsWith("node-upgrade/")) {
      printNode(WorkflowStub.fromTyped(client.newWorkflowStub(dev.inplace.workflows.api.NodeUpgradeWorkflow.class, id))
          .query("progress", NodeProgress.class));
    } else {
      printRun(controls(id).progress());
    }
  }

  private void watch(String id) {
    String last = "";
    while (true) {
      Supplier<String> render = () -> {
        var buffer = new java.io.ByteArrayOutputStream();
        PrintStream printer = new PrintStream(buffer, true, java.nio.charset.StandardCharsets.UTF_8);
        new InplaceCli(client, taskQueue, printer, pollMillis).status(id);
        return buffer.toString(java.nio.charset.StandardCharsets.UTF_8);
      };
      String now = render.get();
      if (!now.equals(last)) {
        out.print(now);
        out.println();
        last = now;
      }
      if (closed(id)) {
        return;
      }
      try {
        Thread.sleep(pollMillis);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return;
      }
    }
  }

  private boolean closed(String id) {
    WorkflowExecutionStatus status = client.newUntypedWorkflowStub(id).describe().getStatus();
    return status != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
  }

  private void printRun(UpgradeProgress p) {
    out.printf("%s %s -> %s: %s%s (%d/%d upgraded, %d failed, %d skipped, %d in flight, window %d)%n",
        p.kind(), p.cluster(), p.targetVersion(), p.phase(), p.paused() ? " (paused)" : "", p.upgraded(), p.total(),
        p.failed(), p.skipped(), p.inFlight(), p.window());
    if (p.message() != null && !p.message().isBlank()) {
      out.println("  " + p.message());
    }
    if (p.etcdSnapshot() != null && !p.etcdSnapshot().isBlank()) {
      out.println("  etcd snapshot: " + p.etcdSnapshot());
    }
    out.printf("  %-12s %-16s %-10s %s%n", "NODE", "PHASE", "STEP", "MESSAGE");
    for (NodeStatus n : p.nodes()) {
      out.printf("  %-12s %-16s %-10s %s%n", n.node(), n.phase(), n.step() == null ? "" : n.step().cliName(),
          n.message() == null ? "" : n.message());
    }
  }

  private void printNode(NodeProgress p) {
    out.printf("%s (%s): %s%s%n", p.nodeName(), p.machineName(), p.phase(),
        p.currentStep() == null ? "" : " at " + p.currentStep().cliName());
    for (StepRecord s : p.steps()) {
      out.printf("  %-10s %-8s %s%n", s.step().cliName(), s.status().name().toLowerCase(Locale.ROOT), s.message());
    }
  }

  private static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t.getMessage() == null ? e.toString() : t.getMessage();
  }
}
