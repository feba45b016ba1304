package dev.inplace.starter;

import dev.inplace.workflows.api.UpgradeControls;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import java.util.Objects;
import java.util.concurrent.Callable;
import java.util.function.BiFunction;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** The commands on one existing run: read its progress, follow it, or send an operator Update. */
final class RunCommands {
  private RunCommands() {}

  /** {@code -o table|json|yaml}, shared by every read command. */
  static final class OutputOption {
    @picocli.CommandLine.Mixin InplaceCli.HelpOption help;

    @Option(names = {"-o", "--output"}, paramLabel = "FORMAT", defaultValue = "table",
        description = "Output format: ${COMPLETION-CANDIDATES} (default ${DEFAULT-VALUE}).")
    Output output;
  }

  @Command(name = "status", description = {
      "Print a run's progress: phase, counts, every node's phase, step and message.",
      "For a node-upgrade/... or node-upgrade-hook/... ID: each step of that node."})
  static final class Status implements Callable<Integer> {
    private final CliContext context;
    @picocli.CommandLine.Mixin OutputOption format;

    @Parameters(index = "0", paramLabel = "ID", description = "A cp-upgrade/, workers-upgrade/, node-upgrade/ or node-upgrade-hook/ workflow ID.")
    String id;

    Status(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() {
      RunViews.runId(id);
      format.output.print(context.out, RunViews.progress(context.client(), id), p -> RunViews.printTable(context.out, p));
      return CliErrors.OK;
    }
  }

  @Command(name = "watch", description = {
      "Print the progress whenever it changes, until the run ends.",
      "Exits 0 when the run completed, 1 when it failed, was cancelled or terminated.",
      "With -o json: one JSON document per line."})
  static final class Watch implements Callable<Integer> {
    private final CliContext context;
    @picocli.CommandLine.Mixin OutputOption format;

    @Parameters(index = "0", paramLabel = "ID", description = "A cp-upgrade/, workers-upgrade/, node-upgrade/ or node-upgrade-hook/ workflow ID.")
    String id;

    Watch(CliContext context) {
      this.context = context;
    }

    @Override
    public Integer call() throws InterruptedException {
      RunViews.runId(id);
      Object last = null;
      while (true) {
        WorkflowExecutionStatus status = RunViews.status(context.client(), id);
        boolean running = status == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING;
        boolean completed = status == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED;
        // A terminated or timed-out run cannot answer a query: only its end is reported.
        if (running || completed) {
          Object now = RunViews.progress(context.client(), id);
          if (!Objects.equals(now, last)) {
            format.output.printNext(context.out, now, p -> {
              RunViews.printTable(context.out, p);
              context.out.println();
            });
            last = now;
          }
        }
        if (completed) {
          return CliErrors.OK;
        }
        if (!running) {
          throw new IllegalStateException("run " + id + " ended " + RunViews.ended(status));
        }
        Thread.sleep(context.pollMillis);
      }
    }
  }

  /** An Update on a parent run, printing the run's answer. */
  abstract static class Control implements Callable<Integer> {
    private final CliContext context;
    private final BiFunction<UpgradeControls, String, String> update;
    @picocli.CommandLine.Mixin InplaceCli.HelpOption help;

    @Parameters(index = "0", paramLabel = "ID", description = "A cp-upgrade/ or workers-upgrade/ workflow ID.")
    String id;

    Control(CliContext context, BiFunction<UpgradeControls, String, String> update) {
      this.context = context;
      this.update = update;
    }

    /** The Update's argument, if it takes one. */
    String argument() {
      return null;
    }

    @Override
    public Integer call() {
      RunViews.parentRunId(id);
      RunViews.requireRunning(context.client(), id, getClass().getAnnotation(Command.class).name());
      context.out.println(update.apply(RunViews.controls(context.client(), id), argument()));
      return CliErrors.OK;
    }
  }

  @Command(name = "pause", description = "Start no new nodes; nodes in flight finish.")
  static final class Pause extends Control {
    Pause(CliContext context) {
      super(context, (c, a) -> c.pause());
    }
  }

  @Command(name = "resume", description = "Resume a paused run.")
  static final class Resume extends Control {
    Resume(CliContext context) {
      super(context, (c, a) -> c.resume());
    }
  }

  @Command(name = "abort", description = "Start no new nodes, let nodes in flight finish, then end the run.")
  static final class Abort extends Control {
    Abort(CliContext context) {
      super(context, (c, a) -> c.abort());
    }
  }

  @Command(name = "retry", description = "Retry a failed node of a halted run.")
  static final class Retry extends Control {
    @Parameters(index = "1", paramLabel = "NODE", description = "The node to retry.")
    String node;

    Retry(CliContext context) {
      super(context, (c, a) -> c.retryNode(a));
    }

    @Override
    String argument() {
      return node;
    }
  }

  @Command(name = "skip", description = "Skip a failed node of a halted run and continue.")
  static final class Skip extends Control {
    @Parameters(index = "1", paramLabel = "NODE", description = "The node to skip.")
    String node;

    Skip(CliContext context) {
      super(context, (c, a) -> c.skipNode(a));
    }

    @Override
    String argument() {
      return node;
    }
  }

  @Command(name = "max-unavailable", description = "Resize a WorkersUpgrade's window.")
  static final class MaxUnavailable extends Control {
    @Parameters(index = "1", paramLabel = "N|N%", description = "A count or a percent of the pool.")
    String value;

    MaxUnavailable(CliContext context) {
      super(context, (c, a) -> c.setMaxUnavailable(a));
    }

    @Override
    String argument() {
      return value;
    }
  }
}
