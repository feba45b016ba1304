package dev.inplace.starter;

import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PlanWorkflow;
import dev.inplace.workflows.api.PlanWorkflow.PlanRequest;
import dev.inplace.workflows.api.PlanWorkflow.PlanScope;
import dev.inplace.workflows.api.UpgradePlan;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import java.io.PrintStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.UUID;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/**
 * {@code plan}: what an upgrade would do, without doing it. Runs the read-only Plan workflow on the
 * worker (which holds the SSH keys and the cluster access) and prints its answer.
 */
@Command(name = "plan", description = {
    "Plan an upgrade and change nothing: waves, each node's steps and scripts, findings.",
    "Waves: control planes one at a time, then each MachineDeployment's workers within",
    "--max-unavailable, in the order the runs use. Scripts: rendered for the distribution and its",
    "host layout. Findings: version skew, disk, arch, PodDisruptionBudgets that will block a drain,",
    "the next opening of the maintenance window. Runs as a read-only workflow on the worker, which",
    "inspects each host to upgrade over SSH with the read-only inspect script unless --offline.",
    "Exit code 1 when a finding is an error (the run would refuse)."})
final class PlanCommand implements Callable<Integer> {
  /** How long the CLI waits for the worker's answer. */
  static final Duration PLAN_TIMEOUT = Duration.ofMinutes(5);

  private final CliContext context;
  @Mixin UpgradeOptions options;

  @Option(names = "--scope", paramLabel = "SCOPE", defaultValue = "cluster",
      description = "cluster (default: control plane, then workers), controlplane or workers.")
  String scope;

  @Option(names = "--machine-deployment", paramLabel = "MD", split = ",",
      description = "Plan only these MachineDeployments (default every one of the cluster).")
  List<String> machineDeployments;

  @Option(names = "--max-unavailable", paramLabel = "N|N%", defaultValue = "1",
      description = "Workers upgraded at once per MachineDeployment (default ${DEFAULT-VALUE}).")
  String maxUnavailable;

  @Option(names = "--offline", description = "Do not inspect the hosts over SSH (the plan still reads the cluster).")
  boolean offline;

  @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
      description = "Output format: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
  Output output;

  PlanCommand(CliContext context) {
    this.context = context;
  }

  @Override
  public Integer call() {
    PlanScope planScope = switch (scope.toLowerCase(Locale.ROOT)) {
      case "cluster" -> PlanScope.CLUSTER;
      case "controlplane", "control-plane" -> PlanScope.CONTROL_PLANE;
      case "workers" -> PlanScope.WORKERS;
      default -> throw new picocli.CommandLine.ParameterException(options.spec.commandLine(),
          "--scope must be cluster, controlplane or workers, got '" + scope + "'");
    };
    NodeUpgradeTemplate template = options.template();
    PlanRequest request = new PlanRequest(options.cluster, template, planScope, machineDeployments,
        options.maxUnavailable(maxUnavailable),
        options.window(), !offline);
    UpgradePlan plan = run(context.client(), context.taskQueue, request);
    output.print(context.out, plan, p -> printTable(context.out, p));
    return plan.refused() ? CliErrors.FAILED : CliErrors.OK;
  }

  /** Runs the Plan workflow and waits for its plan. */
  static UpgradePlan run(WorkflowClient client, String taskQueue, PlanRequest request) {
    String id = WorkflowIds.plan(request.cluster().namespace(), request.cluster().name(),
        request.template().targetVersion(), UUID.randomUUID().toString());
    PlanWorkflow stub = client.newWorkflowStub(PlanWorkflow.class, WorkflowOptions.newBuilder()
        .setWorkflowId(id)
        .setTaskQueue(taskQueue)
        .setWorkflowExecutionTimeout(PLAN_TIMEOUT)
        .setStaticSummary("Plan " + request.cluster() + " to " + request.template().targetVersion()
            + (request.inspectHosts() ? "" : " (offline)"))
        .build());
    return stub.plan(request);
  }

  /** Summary, waves with their nodes, findings, each node's steps, then the script names. */
  static void printTable(PrintStream out, UpgradePlan plan) {
    out.println(plan.summary());
    if (plan.windowOpensAt() != null) {
      out.println("maintenance window opens: " + plan.windowOpensAt());
    }
    out.println();
    List<String[]> rows = new ArrayList<>();
    rows.add(new String[] {"WAVE", "GROUP", "NODE", "MACHINE", "ROLE", "CURRENT", "ACTION"});
    for (UpgradePlan.PlannedNode n : plan.nodes()) {
      rows.add(new String[] {n.wave() == 0 ? "-" : String.valueOf(n.wave()), n.group(), n.node(), n.machine(),
          n.role() == null ? "" : n.role().name().toLowerCase(Locale.ROOT).replace('_', '-'),
          n.currentVersion() == null ? "-" : n.currentVersion(), n.action()});
    }
    table(out, rows);
    if (!plan.findings().isEmpty()) {
      out.println();
      List<String[]> findings = new ArrayList<>();
      findings.add(new String[] {"SEVERITY", "REASON", "NODE", "MESSAGE"});
      for (UpgradePlan.Finding f : plan.findings()) {
        findings.add(new String[] {f.severity().name(), f.reason(), f.node() == null ? "-" : f.node(), f.message()});
      }
      table(out, findings);
    }
    for (UpgradePlan.PlannedNode n : plan.nodes()) {
      if (n.steps().isEmpty()) {
        continue;
      }
      out.println();
      out.println("steps of " + n.node() + " (wave " + n.wave() + "):");
      for (UpgradePlan.Step s : n.steps()) {
        out.println("  " + (s.compensation() ? "(on failure) " : "") + s.step() + ": " + s.description()
            + (s.script() == null ? "" : " [script " + s.script() + "]"));
      }
    }
    if (!plan.scripts().isEmpty()) {
      out.println();
      out.println("scripts (text with -o json or -o yaml): "
          + String.join(", ", plan.scripts().stream().map(UpgradePlan.Script::name).toList()));
    }
  }

  private static void table(PrintStream out, List<String[]> rows) {
    int[] width = new int[rows.get(0).length];
    for (String[] row : rows) {
      for (int c = 0; c < row.length - 1; c++) {
        width[c] = Math.max(width[c], row[c].length());
      }
    }
    for (String[] row : rows) {
      StringBuilder line = new StringBuilder();
      for (int c = 0; c < row.length; c++) {
        line.append(c == row.length - 1 ? row[c] : String.format("%-" + width[c] + "s  ", row[c]));
      }
      out.println(line.toString().stripTrailing());
    }
  }
}
