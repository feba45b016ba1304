package dev.inplace.starter;

import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.client.UpgradeRuns;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;

/** {@code upgrade controlplane|workers}: starts a parent run (idempotent: a second start attaches). */
@Command(name = "upgrade", description = "Start an upgrade run.",
    subcommands = {UpgradeCommand.ControlPlane.class, UpgradeCommand.Workers.class})
final class UpgradeCommand {
  @Mixin InplaceCli.HelpOption help;

  @Command(name = "controlplane", description = {
      "Start a ControlPlaneUpgrade: control-plane nodes one at a time after an etcd snapshot.",
      "ID: cp-upgrade/<ns>/<cluster>/<version>; a second start attaches to the first."})
  static final class ControlPlane implements Callable<Integer> {
    private final CliContext context;
    @Mixin UpgradeOptions options;

    ControlPlane(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      NodeUpgradeTemplate template = options.template();
      var request = new ControlPlaneUpgradeRequest(options.cluster, template, options.soak, options.window());
      report(context, UpgradeRuns.launchControlPlane(context.client(), context.taskQueue, request));
      return CliErrors.OK;
    }
  }

  @Command(name = "workers", description = {
      "Start a WorkersUpgrade for one MachineDeployment through a sliding window of nodes.",
      "ID: workers-upgrade/<ns>/<cluster>/<md>/<version>; a second start attaches to the first."})
  static final class Workers implements Callable<Integer> {
    private final CliContext context;
    @Mixin UpgradeOptions options;

    @Option(names = "--machine-deployment", required = true, paramLabel = "MD", description = "The MachineDeployment to upgrade.")
    String machineDeployment;

    @Option(names = "--max-unavailable", paramLabel = "N|N%", defaultValue = "1",
        description = "Nodes upgraded at once: a count or a percent of the pool (default ${DEFAULT-VALUE}).")
    String maxUnavailable;

    @Option(names = "--on-failure", paramLabel = "POLICY", defaultValue = "halt",
        description = "halt (default: wait for retry, skip or abort) or continue up to --max-failures.")
    String onFailure;

    @Option(names = "--max-failures", paramLabel = "N", defaultValue = "0", converter = Converters.Count.class,
        description = "Failed nodes tolerated with --on-failure continue (default ${DEFAULT-VALUE}).")
    int maxFailures;

    Workers(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      FailurePolicy policy = switch (onFailure.toLowerCase(java.util.Locale.ROOT)) {
        case "halt" -> FailurePolicy.HALT;
        case "continue" -> FailurePolicy.CONTINUE;
        default -> throw new picocli.CommandLine.ParameterException(options.spec.commandLine(),
            "--on-failure must be halt or continue, got '" + onFailure + "'");
      };
      if (policy == FailurePolicy.HALT && maxFailures > 0) {
        throw new picocli.CommandLine.ParameterException(options.spec.commandLine(),
            "--max-failures applies only with --on-failure continue (with halt the first failed node halts the run)");
      }
      NodeUpgradeTemplate template = options.template();
      var request = new WorkersUpgradeRequest(options.cluster, machineDeployment, template,
          options.maxUnavailable(maxUnavailable), policy,
          maxFailures, options.soak, options.window(), null);
      report(context, UpgradeRuns.launchWorkers(context.client(), context.taskQueue, request));
      return CliErrors.OK;
    }
  }

  /** A second start attaches: say so, since the options given now are not the run's. */
  private static void report(CliContext context, UpgradeRuns.Launch launch) {
    if (launch.started()) {
      context.out.println("started " + launch.workflowId());
    } else {
      context.out.println("attached to " + launch.workflowId() + ": that run is running or has completed and"
          + " keeps the settings it was started with; the options given now were not applied");
    }
  }
}
