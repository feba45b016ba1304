package dev.inplace.sandbox.chaos;

import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoResources;
import dev.inplace.sandbox.demo.DemoSummary;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.sandbox.stack.ProcessDemo;
import dev.inplace.sandbox.stack.RemoteEstate;
import dev.inplace.sandbox.stack.StackLayout;
import dev.inplace.sandbox.truth.EstateReport;
import dev.inplace.sandbox.truth.HostJournal;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.serviceclient.WorkflowServiceStubs;
import dev.inplace.workflows.api.ReleaseCatalogue;
import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.HashSet;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The chaos campaign: starts the local stack of processes, applies the ControlPlaneUpgrade and
 * WorkersUpgrade (the demo acts as the operator: it skips a node made to fail once it is rolled
 * back), kills worker processes while the runs go on ({@link WorkerKiller}) and, when both resources
 * are terminal or the deadline passed, checks the invariants against ground truth
 * ({@link GroundTruthCheck}).
 */
public final class ChaosCampaign {
  private final ChaosOptions options;
  private final PrintStream out;
  private final long startNanos = System.nanoTime();
  private final long startEpochMillis = System.currentTimeMillis();

  private ChaosCampaign(ChaosOptions options, PrintStream out) {
    this.options = options;
    this.out = out;
  }

  /** Runs a campaign with a stack in {@code layout}; the stack is stopped at the end. */
  public static ChaosSummary run(StackLayout layout, ChaosOptions options, PrintStream out) {
    return new ChaosCampaign(options, out).run(layout);
  }

  private ChaosSummary run(StackLayout layout) {
    DemoOptions demo = options.demoOptions();
    say("inplace chaos: seed %d, %d nodes (%d control planes, %d MachineDeployments x %d), %d kills, %d workers,"
            + " ssh drop %d%%, hang %d%%%s", options.seed(), options.nodes(), ChaosOptions.CONTROL_PLANES, options.pools(),
        options.workersPerPool(), options.kills(), options.workers(), options.sshDropPercent(), options.sshHangPercent(),
        options.faults().isEmpty() ? "" : ", fail " + String.join(" ", options.faults()));
    say("Temporal: %s%s", options.temporal().cliName(),
        options.temporalKills() == 0 ? "" : ", killed " + options.temporalKills() + " time(s) mid-run");
    LocalStack.Spec spec = new LocalStack.Spec(options.workers(), estateArgs(), false, true, options.temporal());
    LocalStack stack = LocalStack.up(layout, spec, out);
    Thread onInterrupt = new Thread(() -> LocalStack.down(layout), "inplace-chaos-down");
    Runtime.getRuntime().addShutdownHook(onInterrupt);
    WorkflowServiceStubs service = ProcessDemo.connect();
    try (RemoteEstate estate = RemoteEstate.open(layout)) {
      ActivityWatch watch = new ActivityWatch(service);
      watch.follow(estate.nodes().stream()
          .map(n -> WorkflowIds.nodeUpgrade(Estate.NAMESPACE, n.machine(), demo.to())).toList());
      List<CompensationKill> compensations = compensationKills(demo, estate, watch, layout);
      TemporalKiller serverKiller =
          new TemporalKiller(stack, watch, options.seed(), options.temporalKills(), startNanos, this::say);
      WorkerKiller killer = new WorkerKiller(stack, watch, options.seed(), options.kills(), compensations.size(), this::say,
          serverKiller::serving);
      CompletableFuture<DemoSummary> operator = new CompletableFuture<>();
      Thread driver = new Thread(() -> {
        try {
          operator.complete(ProcessDemo.follow(stack, demo, out));
        } catch (Throwable t) {
          operator.completeExceptionally(t);
        }
      }, "chaos-operator");
      driver.setDaemon(true);
      driver.start();
      Thread killing = new Thread(killer, "chaos-killer");
      killing.setDaemon(true);
      killing.start();
      Thread serverKilling = new Thread(serverKiller, "chaos-server-killer");
      serverKilling.setDaemon(true);
      serverKilling.start();
      List<Thread> aiming = new ArrayList<>();
      for (CompensationKill c : compensations) {
        c.bind(killer);
        Thread t = new Thread(c, "chaos-compensation-kill");
        t.setDaemon(true);
        t.start();
        aiming.add(t);
      }

      boolean ended = awaitEnd(operator, estate.management(), watch);
      compensations.forEach(CompensationKill::stop);
      aiming.forEach(Thread::interrupt);
      killer.stop();
      killing.interrupt();
      serverKiller.stop();
      join(serverKilling); // a kill under way still starts the server again: the verdict asks it
      if (!ended) {
        say("the runs did not end within %d s", options.deadlineSeconds());
      }
      return verdict(estate, watch, killer.kills(), serverKiller, demo, ended);
    } finally {
      service.shutdownNow();
      stack.close();
      try {
        Runtime.getRuntime().removeShutdownHook(onInterrupt);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs (or ran) anyway
      }
    }
  }

  /**
   * One kill kept for the compensation of each node made to fail at a step that has one, as long as
   * the campaign has kills for them.
   */
  private List<CompensationKill> compensationKills(DemoOptions demo, RemoteEstate estate, ActivityWatch watch,
      StackLayout layout) {
    List<CompensationKill> kills = new ArrayList<>();
    Set<String> seen = new HashSet<>();
    for (DemoOptions.Fault fault : demo.faults()) {
      if (!CompensationKill.STEPS_WITH_COMPENSATION.contains(fault.step()) || !seen.add(fault.node())
          || kills.size() >= options.kills()) {
        continue;
      }
      estate.nodes().stream().filter(n -> n.name().equals(fault.node())).findFirst().ifPresent(n -> kills.add(
          new CompensationKill(watch, n.name(), WorkflowIds.nodeUpgrade(Estate.NAMESPACE, n.machine(), demo.to()),
              layout.hostRoot(n.name()), options.seed(), this::say)));
    }
    return kills;
  }

  /** The estate's options: the demo's, and the SSH faults with the campaign's seed. */
  private List<String> estateArgs() {
    List<String> args = new ArrayList<>(DemoOptions.estateArgs(options.demoArgs()));
    args.addAll(List.of("--ssh-drop", Integer.toString(options.sshDropPercent()),
        "--ssh-hang", Integer.toString(options.sshHangPercent()), "--ssh-seed", Long.toString(options.seed())));
    return args;
  }

  /** Every sha256 the release catalogue lists: the only binaries that may ever start on a host. */
  private static Set<String> catalogueDigests(RemoteEstate estate) {
    try {
      ReleaseCatalogue catalogue = ReleaseCatalogue.parse(Files.readString(estate.catalogue()), estate.catalogue().toString());
      Set<String> digests = new HashSet<>();
      catalogue.releases().forEach(r -> r.artifacts().forEach(a -> digests.add(a.sha256())));
      return digests;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the release catalogue " + estate.catalogue(), e);
    }
  }

  /** Waits for the operator to see both resources terminal; follows the parents' run IDs meanwhile. */
  private boolean awaitEnd(CompletableFuture<DemoSummary> operator, KubernetesClient management, ActivityWatch watch) {
    long deadline = startNanos + TimeUnit.SECONDS.toNanos(options.deadlineSeconds());
    while (System.nanoTime() < deadline) {
      followParents(management, watch);
      try {
        operator.get(1, TimeUnit.SECONDS);
        followParents(management, watch);
        return true;
      } catch (TimeoutException e) {
        // still running
      } catch (ExecutionException e) {
        say("the operator stopped: %s", e.getCause());
        return false;
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return false;
      }
    }
    return false;
  }

  private static void followParents(KubernetesClient management, ActivityWatch watch) {
    for (UpgradeStatus status : statuses(management)) {
      if (status != null && status.getWorkflowIds() != null) {
        watch.follow(status.getWorkflowIds());
      }
    }
  }

  private static List<UpgradeStatus> statuses(KubernetesClient management) {
    List<UpgradeStatus> statuses = new ArrayList<>();
    ControlPlaneUpgrade cp = management.resources(ControlPlaneUpgrade.class).inNamespace(Estate.NAMESPACE)
        .withName(DemoResources.CONTROL_PLANE).get();
    WorkersUpgrade workers = management.resources(WorkersUpgrade.class).inNamespace(Estate.NAMESPACE)
        .withName(DemoResources.WORKERS).get();
    statuses.add(cp == null ? null : cp.getStatus());
    statuses.add(workers == null ? null : workers.getStatus());
    return statuses;
  }

  private ChaosSummary verdict(RemoteEstate estate, ActivityWatch watch, List<WorkerKiller.Kill> kills,
      TemporalKiller serverKiller, DemoOptions demo, boolean ended) {
    Set<String> failing = options.faults().stream().map(f -> f.substring(0, f.indexOf(':'))).collect(Collectors.toSet());
    boolean controlPlaneFails = estate.nodes().stream()
        .anyMatch(n -> failing.contains(n.name()) && n.role() == NodeRole.CONTROL_PLANE);
    GroundTruthCheck check = new GroundTruthCheck(estate, demo.from(), demo.to(), failing);
    if (!ended) {
      check.violation("the runs did not end within the deadline of " + options.deadlineSeconds() + " s");
    }
    check.nodes();
    check.capiObjects();
    check.runs(watch);
    EstateReport report = estate.report();
    check.report(report, catalogueDigests(estate), controlPlaneFails);
    List<UpgradeStatus> statuses = statuses(estate.management());
    List<String> names = List.of("ControlPlaneUpgrade " + DemoResources.CONTROL_PLANE, "WorkersUpgrade " + DemoResources.WORKERS);
    for (int i = 0; i < statuses.size(); i++) {
      UpgradePhase phase = statuses.get(i) == null ? null : statuses.get(i).getPhase();
      boolean expected = failing.isEmpty() || (i == 0 && !controlPlaneFails)
          ? phase == UpgradePhase.SUCCEEDED : phase != null && phase.terminal() && phase != UpgradePhase.ABORTED;
      if (!expected) {
        check.violation(names.get(i) + " ended " + phase);
      }
    }
    List<WorkerKiller.Kill> inOrder = kills.stream().sorted(Comparator.comparingLong(WorkerKiller.Kill::atMillis)).toList();
    List<HostJournal> journals = report.journals();
    List<KillReport> attribution = new ArrayList<>();
    for (int i = 0; i < inOrder.size(); i++) {
      attribution.add(KillAttribution.report(i + 1, inOrder.get(i), startEpochMillis, journals));
    }
    int mid = (int) attribution.stream().filter(KillReport::midActivity).count();
    int inCompensation = (int) attribution.stream().filter(KillReport::inCompensation).count();
    if (options.kills() > 0 && kills.size() < options.kills()) {
      check.violation("only " + kills.size() + " of " + options.kills() + " kills landed before the runs ended");
    }
    List<TemporalKiller.ServerKill> serverKills = serverKiller.kills();
    if (serverKiller.failure() != null) {
      check.violation("the Temporal server did not serve again after a kill: " + serverKiller.failure());
    }
    if (serverKills.size() < options.temporalKills()) {
      check.violation("only " + serverKills.size() + " of " + options.temporalKills()
          + " Temporal server kills landed before the runs ended");
    }
    if (kills.size() >= 3 && mid * 3 < kills.size()) {
      check.violation("only " + mid + " of " + kills.size() + " kills landed mid-activity (at least a third must)");
    }
    Map<String, Integer> byActivity = new TreeMap<>();
    Map<String, Integer> byRestart = new TreeMap<>();
    Map<String, Integer> byKind = new TreeMap<>();
    for (KillReport k : attribution) {
      byActivity.merge(k.activities().isEmpty() ? (k.journal().isEmpty() ? "(idle)" : "(journal) " + k.journal().get(0).script())
          : k.activities().get(0).activity(), 1, Integer::sum);
      byRestart.merge(k.restart(), 1, Integer::sum);
      Set<String> kinds = new TreeSet<>();
      k.activities().forEach(a -> kinds.add(a.kind()));
      if (k.inCompensation()) {
        kinds.add(KillKind.COMPENSATION.label());
      }
      if (kinds.isEmpty()) {
        kinds.add(k.midActivity() ? "unknown" : "idle");
      }
      kinds.forEach(kind -> byKind.merge(kind, 1, Integer::sum));
      say("kill %d at %.1f s (%s, %s): %s; journal: %s", k.kill(), k.atSeconds(), k.worker(), k.aim(),
          k.activities().isEmpty() ? "no attempt open" : k.activities().stream()
              .map(a -> a.activity() + " attempt " + a.attempt() + " of " + a.workflowId() + " [" + a.kind() + "]")
              .collect(Collectors.joining(", ")),
          k.journal().isEmpty() ? "nothing running" : k.journal().stream().map(ChaosCampaign::evidenceText)
              .collect(Collectors.joining("; ")));
    }
    double wall = Math.round((System.nanoTime() - startNanos) / 1e8) / 10.0;
    ChaosSummary summary = new ChaosSummary(options.seed(), options.nodes(), kills.size(), mid, inCompensation,
        check.sshDropped, check.sshHung, check.upgraded, check.rolledBack, check.leftCordoned, check.marksLeft,
        check.duplicateDestructive, check.wrongDigestStarts, check.stuckRuns, wall,
        options.kills(), check.maxHistoryEvents, byActivity, byRestart, byKind, attribution,
        options.temporal().cliName(), serverKills.size(), serverKills, check.violations());
    say("%s: %d kills (%d mid-activity, %d inside a compensation), %d Temporal server kills, %d upgraded, %d rolled back,"
            + " in %.1f s; seed %d",
        summary.passed() ? "every invariant held" : summary.violations().size() + " invariant(s) broken",
        summary.kills(), mid, inCompensation, serverKills.size(), summary.upgraded(), summary.rolledBack(), wall,
        options.seed());
    summary.violations().forEach(v -> say("  violated: %s", v));
    return summary;
  }

  private static void join(Thread thread) {
    try {
      thread.join(java.time.Duration.ofMinutes(3).toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String evidenceText(KillReport.JournalEvidence e) {
    return e.host() + " " + e.script() + " attempt " + e.attempt() + " (line " + e.line() + ", began "
        + (e.beganAfterKillMillis() <= 0 ? -e.beganAfterKillMillis() + " ms before" : e.beganAfterKillMillis() + " ms after")
        + " the kill, end " + e.end() + ")"
        + (e.repeat() == null ? ", not run again" : ", run again at line " + e.repeat().line() + " attempt "
            + e.repeat().attempt() + " " + e.repeat().end() + (e.repeat().acts().isEmpty() ? " acting on nothing"
                : " acting: " + String.join(", ", e.repeat().acts())));
  }

  private void say(String format, Object... args) {
    out.printf("[chaos %6.1fs] %s%n", (System.nanoTime() - startNanos) / 1e9, String.format(format, args));
  }
}
