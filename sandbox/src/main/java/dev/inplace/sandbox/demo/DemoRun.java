package dev.inplace.sandbox.demo;

import dev.inplace.client.UpgradeRuns;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.StepStatus;
import dev.inplace.workflows.api.UpgradeControls;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.estate.EstateView;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowStub;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.function.Supplier;

/**
 * Drives the demo against a running estate and worker, the way an operator would: resolves the
 * target release from the catalogue, starts a ControlPlaneUpgrade, then one WorkersUpgrade per
 * MachineDeployment, prints every node's steps as they happen, and answers a halted run as
 * {@code --on-failure} says (abort, skipNode, or clear the fault and retryNode).
 */
public final class DemoRun {
  private static final long POLL_MILLIS = 250;

  private final EstateView estate;
  private final WorkflowClient client;
  private final String taskQueue;
  private final DemoOptions options;
  private final PrintStream out;
  /**
   * Where the demo's clock starts: here, or (with resources) right before they are applied, once the
   * CRDs, the release catalogue and the watcher, which a management cluster has before any upgrade,
   * are in place. What came before is start-up ({@link #startupSeconds}).
   */
  private long startNanos = System.nanoTime();
  private double startupSeconds = secondsSinceJvmStart();
  /**
   * When the demo saw the upgrade end (its resources terminal, or its runs done): wallSeconds ends
   * here; the final progress reads and the summary that follow are reporting, not upgrade time.
   */
  private long endNanos;
  /** Steps already printed, per node attempt. */
  private final Map<String, Set<String>> printed = new HashMap<>();
  private final Map<String, Integer> attempts = new HashMap<>();
  /** The failure a node had when the demo acted on it (a skipped node still counts as failed). */
  private final Map<String, NodeStatus> failures = new LinkedHashMap<>();
  private final Map<String, NodePhase> lastPhase = new HashMap<>();
  /** The parent runs the resources started (for the timeline). */
  private final Set<String> parentRuns = new java.util.LinkedHashSet<>();

  /** One parent run being watched. */
  private record Watched(String label, Supplier<UpgradeProgress> progress, UpgradeControls controls, CompletableFuture<?> result) {}

  /** Whether the demo runs the resource watcher itself (in-process) or the worker processes do. */
  private final boolean ownWatcher;

  public DemoRun(Estate estate, WorkflowClient client, String taskQueue, DemoOptions options, PrintStream out) {
    this(estate, client, taskQueue, options, out, true);
  }

  /**
   * A demo against {@code estate}; with {@code ownWatcher} false the workers' own watchers start the
   * runs for the resources the demo applies (the local stack of processes).
   */
  public DemoRun(
      EstateView estate, WorkflowClient client, String taskQueue, DemoOptions options, PrintStream out, boolean ownWatcher) {
    this.ownWatcher = ownWatcher;
    this.estate = estate;
    this.client = client;
    this.taskQueue = taskQueue;
    this.options = options;
    this.out = out;
  }

  public DemoSummary run() {
    Distribution distribution = options.distribution();
    ReleaseCatalogue.Release release = catalogue().find(options.to(), distribution, "amd64", options.os());
    NodeUpgradeTemplate template = new NodeUpgradeTemplate(
        distribution, options.to(), release.artifacts(), distribution.defaultProfile().withOs(options.os()), estate.ssh(),
        new DrainOptions(options.drainTimeoutSeconds(), true, false, PdbBlockedAction.FAIL, false),
        options.readyTimeoutSeconds(), 0, release.arch());
    out.printf("inplace demo: %s%s cluster %s, %d control plane%s, %d MachineDeployment%s x %d workers, %s -> %s,"
            + " max-unavailable %s, on-failure %s%n",
        distribution.name().toLowerCase(), options.os() == dev.inplace.workflows.api.HostOs.KAIROS ? " on Kairos" : "",
        estate.cluster(), options.controlPlanes(),
        options.controlPlanes() == 1 ? "" : "s", options.pools(),
        options.pools() == 1 ? "" : "s", options.workers(), options.from(), options.to(), options.maxUnavailable(),
        options.onFailure().name().toLowerCase());

    Map<String, NodeStatus> finalStatus = new LinkedHashMap<>();
    if (options.mode() == DemoOptions.Mode.CRS) {
      runThroughResources(release, finalStatus);
    } else if (options.mode() == DemoOptions.Mode.EXTENSION) {
      if (!(estate instanceof Estate local)) {
        throw new IllegalStateException("--mode extension needs the in-process estate");
      }
      finalStatus.putAll(
          new dev.inplace.sandbox.extension.ExtensionDemo(local, client, taskQueue, options, out).run());
    } else {
      runWorkflows(template, finalStatus);
    }
    DemoSummary summary = summarise(finalStatus);
    timeline(finalStatus); // after the summary: reading the histories is not the upgrade's time
    return summary;
  }

  /** Starts the parent workflows directly, as the CLI does. */
  private void runWorkflows(NodeUpgradeTemplate template, Map<String, NodeStatus> finalStatus) {
    ControlPlaneUpgradeWorkflow cp = UpgradeRuns.startControlPlane(
        client, taskQueue, new ControlPlaneUpgradeRequest(estate.cluster(), template, 0, null));
    Watched cpRun = watched("control plane", cp, cp::progress);
    watch(List.of(cpRun));
    UpgradeProgress cpDone = finalProgress(cpRun, finalStatus);
    boolean controlPlaneAtTarget = cpDone != null && cpDone.total() > 0 && cpDone.upgraded() == cpDone.total();

    if (controlPlaneAtTarget) {
      List<Watched> pools = new ArrayList<>();
      for (String pool : estate.pools()) {
        WorkersUpgradeWorkflow workers = UpgradeRuns.startWorkers(client, taskQueue, new WorkersUpgradeRequest(
            estate.cluster(), pool, template, options.maxUnavailable(), FailurePolicy.HALT, 0, 0, null, null));
        pools.add(watched(pool, workers, workers::progress));
      }
      watch(pools);
      endNanos = System.nanoTime();
      pools.forEach(w -> finalProgress(w, finalStatus));
    } else {
      endNanos = System.nanoTime();
      out.println("control plane not at " + options.to() + ": workers are not started"
          + " (a kubelet must never be newer than the apiserver)");
    }
  }

  /**
   * Applies a ControlPlaneUpgrade and a WorkersUpgrade resource (the WorkersUpgrade waits for the
   * control plane) and follows them: the worker's watcher starts the runs and mirrors them into the
   * resources' status; the demo finds the runs there and answers halts as an operator would.
   */
  private void runThroughResources(ReleaseCatalogue.Release release, Map<String, NodeStatus> finalStatus) {
    KubernetesClient management = estate.management();
    InplaceCrds.install(management);
    String ns = Estate.NAMESPACE;
    // The watcher is the worker's: it uses the worker's client (its requests are what RBAC must grant).
    try (UpgradeWatcher watcher = ownWatcher ? UpgradeWatcher.start(((Estate) estate).workerManagement(), client, taskQueue,
        WatcherOptions.defaults().withStatusInterval(Duration.ofMillis(250)),
        ((Estate) estate).artifactPolicy()) : null; // an own watcher only in-process, with the Estate itself
        ResourcePhases phases = ResourcePhases.follow(management, ns)) {
      management.resource(CatalogueReference.configMap(ns, DemoResources.CATALOGUE, catalogueJson())).createOr(r -> r.update());
      DemoResources.hostProfile(options).ifPresent(profile -> {
        management.resource(profile).createOr(r -> r.update());
        out.printf("created InplaceHostProfile %s (binDir %s), as an administrator would%n",
            profile.getMetadata().getName(), profile.getSpec().getBinDir());
      });
      SshSettings ssh = estate.ssh();
      // The CRDs, the release catalogue and the watcher are what a management cluster has before any
      // upgrade: start-up. The upgrade's clock starts as the resources are applied.
      startClock();
      management.resource(DemoResources.controlPlane(options, ssh)).create();
      management.resource(DemoResources.workers(options, ssh)).create();
      say("applied ControlPlaneUpgrade %s/%s-control-plane and WorkersUpgrade %s/%s-workers",
          ns, Estate.CLUSTER, ns, Estate.CLUSTER);

      Map<String, Watched> runs = new LinkedHashMap<>();
      Set<String> acted = new HashSet<>();
      Map<String, UpgradePhase> seen = new HashMap<>();
      long nextRunPoll = System.nanoTime();
      while (true) {
        List<HasStatus> resources = List.of(
            new HasStatus("ControlPlaneUpgrade", Estate.CLUSTER + "-control-plane",
                phases.controlPlane(Estate.CLUSTER + "-control-plane")),
            new HasStatus("WorkersUpgrade", Estate.CLUSTER + "-workers", phases.workers(Estate.CLUSTER + "-workers")));
        boolean allTerminal = true;
        for (HasStatus r : resources) {
          UpgradeStatus status = r.status();
          UpgradePhase phase = status == null ? null : status.getPhase();
          if (phase != null && seen.put(r.name(), phase) != phase) {
            String reason = phase == UpgradePhase.FAILED
                ? status.condition(UpgradeCondition.FAILED).map(c -> " [" + c.getReason() + "]").orElse("") : "";
            say("%s %s: %s%s%s", r.kind(), r.name(), phase, reason,
                status.getMessage() == null ? "" : " (" + status.getMessage() + ")");
          }
          allTerminal &= phase != null && phase.terminal();
          if (status != null && status.getWorkflowIds() != null) {
            status.getWorkflowIds().forEach(id -> runs.computeIfAbsent(id, this::watchedById));
          }
        }
        if (allTerminal) {
          endNanos = System.nanoTime();
        }
        // The runs' progress (queries, and answers to a halt) at the slower pace; always at the end.
        if (allTerminal || System.nanoTime() - nextRunPoll >= 0) {
          for (Watched w : runs.values()) {
            poll(w, acted);
          }
          nextRunPoll = System.nanoTime() + POLL_MILLIS * 1_000_000;
        }
        if (allTerminal) {
          break;
        }
        phases.awaitChange(Math.max(0, nextRunPoll - System.nanoTime()));
      }
      runs.values().forEach(w -> finalProgress(w, finalStatus));
    }
  }

  private void startClock() {
    startNanos = System.nanoTime();
    startupSeconds = secondsSinceJvmStart();
  }

  /**
   * Since this JVM started: not the process's start, which for {@code ./inplace} (it execs java) would
   * count the launcher's build too.
   */
  private static double secondsSinceJvmStart() {
    long started = java.lang.management.ManagementFactory.getRuntimeMXBean().getStartTime();
    return Math.round((System.currentTimeMillis() - started) / 100.0) / 10.0;
  }

  /** With INPLACE_DEMO_TIMELINE set, every run's history as one timeline (docs/benchmarks.md). */
  private void timeline(Map<String, NodeStatus> nodes) {
    String file = System.getenv(DemoTimeline.ENV);
    if (file == null || file.isBlank()) {
      return;
    }
    Set<String> ids = new java.util.LinkedHashSet<>(parentRuns);
    nodes.values().stream().map(NodeStatus::workflowId).filter(id -> id != null && !id.isEmpty()).forEach(ids::add);
    long zeroMillis = System.currentTimeMillis() - (System.nanoTime() - startNanos) / 1_000_000;
    DemoTimeline.write(java.nio.file.Path.of(file), client, ids, zeroMillis);
  }

  /** A resource's name, kind and status (null until the watcher writes one), whichever kind it is. */
  private record HasStatus(String kind, String name, UpgradeStatus status) {}

  /** A run to watch, or null if the server did not answer in time (the next poll tries again). */
  private Watched watchedById(String workflowId) {
    try {
      return watchedByIdOrThrow(workflowId);
    } catch (RuntimeException e) {
      return null; // e.g. DEADLINE_EXCEEDED on a loaded machine: computeIfAbsent keeps nothing
    }
  }

  private Watched watchedByIdOrThrow(String workflowId) {
    if (workflowId.startsWith("cp-upgrade/")) {
      ControlPlaneUpgradeWorkflow stub = client.newWorkflowStub(ControlPlaneUpgradeWorkflow.class, workflowId);
      return watched("control plane", stub, stub::progress);
    }
    WorkersUpgradeWorkflow stub = client.newWorkflowStub(WorkersUpgradeWorkflow.class, workflowId);
    return watched(workflowId.replaceAll("^workers-upgrade/[^/]+/[^/]+/[^/]+/", ""), stub, stub::progress);
  }

  private String catalogueJson() {
    try {
      return java.nio.file.Files.readString(estate.catalogue());
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException("cannot read the release catalogue " + estate.catalogue(), e);
    }
  }

  private ReleaseCatalogue catalogue() {
    return ReleaseCatalogue.parse(catalogueJson(), estate.catalogue().toString());
  }

  private Watched watched(String label, Object typedStub, Supplier<UpgradeProgress> progress) {
    WorkflowStub stub = WorkflowStub.fromTyped(typedStub);
    CompletableFuture<?> result = stub.getResultAsync(Object.class);
    parentRuns.add(stub.getExecution().getWorkflowId());
    return new Watched(label, progress, (UpgradeControls) typedStub, result);
  }

  /** Polls the runs until all have ended, printing progress and acting on halts. */
  private void watch(List<Watched> runs) {
    Set<String> acted = new HashSet<>();
    while (runs.stream().anyMatch(w -> !w.result().isDone())) {
      for (Watched w : runs) {
        poll(w, acted);
      }
      sleep();
    }
  }

  /** Prints a run's new steps and, if it halted on a failed node, answers as --on-failure says. */
  private void poll(Watched w, Set<String> acted) {
    UpgradeProgress p = query(w.progress());
    if (p == null) {
      return;
    }
    printNodes(p);
    if (p.phase() == RunPhase.HALTED && !w.result().isDone()) {
      for (NodeStatus n : p.nodes()) {
        if (isFailed(n.phase()) && acted.add(n.node() + "#" + attempts.getOrDefault(n.node(), 0))) {
          act(w, n);
        }
      }
    }
  }

  private void act(Watched run, NodeStatus failed) {
    failures.put(failed.node(), failed);
    switch (options.onFailure()) {
      case HALT -> {
        say("%s halted: %s failed at %s (%s); aborting the run", run.label(), failed.node(), step(failed), failed.reason());
        run.controls().abort();
      }
      case SKIP -> {
        say("%s halted: %s failed at %s (%s); skipping it", run.label(), failed.node(), step(failed), failed.reason());
        run.controls().skipNode(failed.node());
      }
      case RETRY -> {
        say("%s halted: %s failed at %s (%s); clearing the fault and retrying", run.label(), failed.node(), step(failed), failed.reason());
        estate.clearFaults(failed.node());
        failures.remove(failed.node());
        attempts.merge(failed.node(), 1, Integer::sum);
        run.controls().retryNode(failed.node());
      }
    }
  }

  private UpgradeProgress finalProgress(Watched run, Map<String, NodeStatus> into) {
    try {
      run.result().join();
    } catch (RuntimeException e) {
      Throwable cause = e.getCause() == null ? e : e.getCause();
      Throwable root = cause.getCause() == null ? cause : cause.getCause();
      say("%s run failed: %s", run.label(), root.getMessage());
    }
    UpgradeProgress p = query(run.progress());
    if (p != null) {
      printNodes(p);
      p.nodes().forEach(n -> into.put(n.node(), n));
    }
    return p;
  }

  /** Prints each node's new steps, read from its NodeUpgrade run's progress query. */
  private void printNodes(UpgradeProgress p) {
    for (NodeStatus n : p.nodes()) {
      NodePhase before = lastPhase.put(n.node(), n.phase());
      if (n.workflowId() == null || n.workflowId().isEmpty() || n.phase() == NodePhase.PENDING) {
        continue;
      }
      boolean changed = before != n.phase();
      if (n.phase() == NodePhase.UPGRADING || n.phase() == NodePhase.ROLLING_BACK || changed) {
        NodeProgress child = query(() -> client.newUntypedWorkflowStub(n.workflowId()).query("progress", NodeProgress.class));
        if (child != null) {
          printSteps(n.node(), child.steps());
        }
      }
    }
  }

  private void printSteps(String node, List<StepRecord> steps) {
    Set<String> seen = printed.computeIfAbsent(node + "#" + attempts.getOrDefault(node, 0), k -> new HashSet<>());
    for (int i = 0; i < steps.size(); i++) {
      StepRecord s = steps.get(i);
      if (s.status() != StepStatus.RUNNING && seen.add(i + ":" + s.step())) {
        say("%-11s %-9s %-7s %s", node, s.step().cliName(),
            s.status() == StepStatus.FAILED ? "FAILED" : s.status().name().toLowerCase(), s.message());
      }
    }
  }

  private DemoSummary summarise(Map<String, NodeStatus> finalStatus) {
    List<NodeOutcome> outcomes = new ArrayList<>();
    for (Estate.EstateNode node : estate.nodes()) {
      NodeStatus status = finalStatus.get(node.name());
      NodeStatus failure = failures.get(node.name());
      NodePhase phase = status == null ? NodePhase.PENDING : status.phase();
      if (phase == NodePhase.SKIPPED && failure != null) {
        phase = failure.phase(); // skipped after failing: still a failed node
        status = failure;
      }
      String result = switch (phase) {
        case UPGRADED -> NodeOutcome.UPGRADED;
        case ROLLED_BACK -> NodeOutcome.ROLLED_BACK;
        case ROLLBACK_FAILED -> NodeOutcome.ROLLBACK_FAILED;
        case FAILED -> NodeOutcome.FAILED;
        case SKIPPED -> NodeOutcome.SKIPPED;
        default -> NodeOutcome.NOT_STARTED;
      };
      String version = switch (phase) {
        case UPGRADED -> options.to();
        case ROLLED_BACK, FAILED, PENDING, SKIPPED -> options.from();
        default -> "";
      };
      outcomes.add(new NodeOutcome(node.name(), node.machine(), result, version,
          status == null || status.step() == null ? "" : status.step().cliName(),
          status == null || status.reason() == null ? "" : status.reason(),
          status == null || status.message() == null ? "" : status.message()));
    }
    double wall = ((endNanos != 0 ? endNanos : System.nanoTime()) - startNanos) / 1e9;
    DemoSummary summary = new DemoSummary(
        outcomes.size(),
        outcomes.stream().filter(NodeOutcome::upgraded).count(),
        outcomes.stream().filter(NodeOutcome::failed).count(),
        outcomes.stream().filter(o -> NodeOutcome.ROLLED_BACK.equals(o.result())).count(),
        outcomes.stream().filter(o -> NodeOutcome.NOT_STARTED.equals(o.result()) || NodeOutcome.SKIPPED.equals(o.result())).count(),
        options.to(),
        Math.round(wall * 10) / 10.0,
        startupSeconds,
        List.copyOf(outcomes));
    out.println();
    out.printf("%-11s %-16s %-15s %s%n", "NODE", "RESULT", "VERSION", "REASON");
    for (NodeOutcome o : summary.results()) {
      out.printf("%-11s %-16s %-15s %s%n", o.node(), o.result(), o.version(),
          o.reason().isEmpty() ? "" : o.reason() + " at " + o.failedStep() + ": " + o.message());
    }
    out.printf("%d nodes: %d upgraded, %d failed (%d rolled back), %d not started, in %.1fs (after %.1fs of start-up)%n",
        summary.nodes(), summary.upgraded(), summary.failed(), summary.rolledBack(), summary.notStarted(),
        summary.wallSeconds(), summary.startupSeconds());
    return summary;
  }

  private static boolean isFailed(NodePhase phase) {
    return phase == NodePhase.FAILED || phase == NodePhase.ROLLED_BACK || phase == NodePhase.ROLLBACK_FAILED;
  }

  private static String step(NodeStatus n) {
    return n.step() == null ? "?" : n.step().cliName();
  }

  private void say(String format, Object... args) {
    out.printf("[%6.1fs] " + format + "%n", prepend((System.nanoTime() - startNanos) / 1e9, args));
  }

  private static Object[] prepend(Object first, Object[] rest) {
    Object[] all = new Object[rest.length + 1];
    all[0] = first;
    System.arraycopy(rest, 0, all, 1, rest.length);
    return all;
  }

  private static <T> T query(Supplier<T> query) {
    try {
      return query.get();
    } catch (RuntimeException e) {
      return null; // not started yet, or between states: try again on the next poll
    }
  }

  private static void sleep() {
    sleep(POLL_MILLIS);
  }

  private static void sleep(long millis) {
    try {
      Thread.sleep(millis);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while watching the runs", e);
    }
  }
}
