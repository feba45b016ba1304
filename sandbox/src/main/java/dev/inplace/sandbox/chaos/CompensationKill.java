package dev.inplace.sandbox.chaos;

import dev.inplace.sandbox.truth.HostJournal;
import dev.inplace.sandbox.truth.ScriptRun;
import dev.inplace.workflows.api.UpgradeStep;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.function.Consumer;

/**
 * One kill kept for the compensation of a node made to fail ({@code --fail NODE:STEP} at a step that
 * has one): it waits until the node run's compensation has an attempt in flight ({@code
 * RestoreBinaries}, or any activity while the run's phase is {@code ROLLING_BACK}), and, for an
 * activity that runs a script on the host, until that script has begun in the host's journal, then
 * kills the worker running it (docs/reliability.md, "Kills"). A run that ends first gives the kill
 * back to the killer. How the worker comes back follows the campaign's seed.
 */
final class CompensationKill implements Runnable {
  /** How often the node run is described while nothing of its compensation is in flight. */
  private static final long DESCRIBE_MILLIS = 50;
  /** How often the host's journal is read while the aimed attempt is about to start its script. */
  private static final long JOURNAL_MILLIS = 5;
  /** How long the journal is watched before the attempt is asked about again. */
  private static final long RECHECK_MILLIS = 200;

  /**
   * Fault steps whose failure rolls the node back: the run registers the uncordon before it cordons
   * and the restore before it installs (NodeUpgradeSteps), so a failure at drain or later compensates;
   * the backup comes before cordon (node-upgrade-backs-up-before-cordon), so its failure has nothing
   * to undo.
   */
  static final Set<UpgradeStep> STEPS_WITH_COMPENSATION = Set.of(UpgradeStep.DRAIN,
      UpgradeStep.INSTALL, UpgradeStep.UPGRADE, UpgradeStep.RESTART, UpgradeStep.VERIFY);

  private final ActivityWatch watch;
  private volatile WorkerKiller killer;
  private final String node;
  private final String workflowId;
  private final Path hostRoot;
  private final Random random;
  private final Consumer<String> say;
  private volatile boolean stopped;

  /**
   * @param workflowId the failing node's NodeUpgrade workflow ID
   * @param hostRoot the node's root directory, where its scripts append their journal
   */
  CompensationKill(ActivityWatch watch, String node, String workflowId, Path hostRoot, long seed,
      Consumer<String> say) {
    this.watch = watch;
    this.node = node;
    this.workflowId = workflowId;
    this.hostRoot = hostRoot;
    this.random = new Random(seed ^ node.hashCode());
    this.say = say;
  }

  /** The killer whose kept kill this spends. */
  void bind(WorkerKiller killer) {
    this.killer = killer;
  }

  void stop() {
    stopped = true;
  }

  @Override
  public void run() {
    // Drawn first, so the way the worker comes back does not depend on how long the wait was.
    long delayMillis = random.nextDouble() < 0.6 ? 0 : 1_000 + random.nextInt(9_000);
    try {
      while (!stopped) {
        Optional<DescribeWorkflowExecutionResponse> run = watch.describe(workflowId);
        if (run.isPresent() && run.get().getWorkflowExecutionInfo().getStatus()
            != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) {
          say.accept(node + "'s run ended with no kill inside its compensation: the kill kept for it goes back");
          killer.giveBack();
          return;
        }
        Optional<ActivityWatch.InFlight> compensation = run.flatMap(d -> aimable(ActivityWatch.started(workflowId, d)));
        if (compensation.isEmpty()) {
          Thread.sleep(DESCRIBE_MILLIS);
          continue;
        }
        ActivityWatch.InFlight attempt = compensation.get();
        if (awaitScript(attempt) && killer.killCompensation(attempt, delayMillis)) {
          return;
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The compensation's attempt in flight on a live worker, if any. */
  Optional<ActivityWatch.InFlight> aimable(List<ActivityWatch.InFlight> started) {
    return started.stream()
        .filter(a -> a.kind() == KillKind.COMPENSATION && killer.liveWorker(a.workerPid()))
        .findFirst();
  }

  /**
   * For an activity that runs scripts, waits until one of them has begun for this attempt in the
   * host's journal: true while it runs (the kill cuts it), or once it ended if the attempt is still in
   * flight; true at once for an activity that runs none. False once the attempt is no longer in
   * flight on that worker.
   */
  private boolean awaitScript(ActivityWatch.InFlight attempt) throws InterruptedException {
    if (KillKind.scriptsOf(attempt.activity()).isEmpty()) {
      return true;
    }
    long recheck = System.currentTimeMillis() + RECHECK_MILLIS;
    long size = -1;
    while (!stopped) {
      long now = journalSize();
      if (now != size) {
        size = now;
        Optional<ScriptRun> script = scriptOf(HostJournal.read(node, hostRoot), attempt);
        if (script.isPresent()) {
          return script.get().open() || watch.stillStarted(attempt);
        }
      }
      if (System.currentTimeMillis() >= recheck) {
        if (!watch.stillStarted(attempt)) {
          return false;
        }
        recheck = System.currentTimeMillis() + RECHECK_MILLIS;
      }
      Thread.sleep(JOURNAL_MILLIS);
    }
    return false;
  }

  /** The latest script run of {@code attempt} in {@code journal}, if one has begun. */
  static Optional<ScriptRun> scriptOf(HostJournal journal, ActivityWatch.InFlight attempt) {
    return journal.runs().stream().filter(r -> KillAttribution.belongs(r, attempt)).reduce((first, last) -> last);
  }

  private long journalSize() {
    try {
      return Files.size(hostRoot.resolve(HostJournal.PATH));
    } catch (NoSuchFileException e) {
      return 0;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
