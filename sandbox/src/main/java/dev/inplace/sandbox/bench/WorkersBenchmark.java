package dev.inplace.sandbox.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.client.UpgradeRuns;
import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.demo.DemoTimeline;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeResult;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.impl.WorkersUpgradeWorkflowImpl;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowStub;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerFactory;
import java.io.PrintStream;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code ./inplace bench}: upgrades a pool of {@code --nodes} workers with a window of {@code
 * --max-unavailable} through the real WorkersUpgrade workflow on the embedded Temporal server, each
 * node's upgrade replaced by a fixed durable timer. Measures how close the wall time comes to the
 * ideal (ceil(N/W) x per-node time), the largest history of any run, and the worker's heap.
 */
public final class WorkersBenchmark {

  /**
   * The benchmark's figures; printed as the last line.
   *
   * @param actionsPerNode Temporal Cloud billable actions per node upgrade ({@link BillableActions}):
   *     the pool's orchestration (every run of the WorkersUpgrade's continue-as-new chain) over its
   *     nodes, plus one real worker node's NodeUpgrade run ({@link RealNodeRun})
   * @param actionsPer100NodePool the same for a pool of 100 workers (exact with {@code --nodes 100})
   * @param orchestrationActions the pool's orchestration, by kind (the whole pool, not per node)
   * @param nodeRunActions one real worker node's NodeUpgrade run, by kind
   */
  public record Figures(
      int nodes, int window, double nodeSeconds, double wallSeconds, double idealSeconds, double ratio,
      int maxHistoryEvents, int runs, long workerHeapMiB, int upgraded, double actionsPerNode,
      long actionsPer100NodePool, Map<BillableActions.Kind, Long> orchestrationActions,
      Map<BillableActions.Kind, Long> nodeRunActions) {}

  private static final String FROM = "v1.30.6+k3s1";
  private static final String TO = "v1.31.2+k3s1";

  private WorkersBenchmark() {}

  public static Figures run(int nodes, int window, Duration perNode, PrintStream out) throws Exception {
    ClusterRef warmup = new ClusterRef("bench", "warmup");
    ClusterRef cluster = new ClusterRef("bench", "bench");
    BenchEstate estate = new BenchEstate(FROM, TO);
    estate.addCluster(warmup, Math.min(window, nodes));
    estate.addCluster(cluster, nodes);
    Figures figures;
    BillableActions orchestration;
    try (TemporalConnection temporal = EmbeddedTemporal.start()) {
      WorkflowClient client = temporal.client();
      WorkerFactory factory = WorkerFactory.newInstance(client);
      Worker worker = factory.newWorker(WorkflowIds.TASK_QUEUE);
      worker.registerWorkflowImplementationTypes(WorkersUpgradeWorkflowImpl.class);
      worker.registerWorkflowImplementationFactory(
          NodeUpgradeWorkflow.class, () -> new SimulatedNodeUpgradeWorkflow(perNode));
      worker.registerActivitiesImplementations(estate.clusterApi(), estate.nodes(), estate.hosts());
      factory.start();

      AtomicLong peakHeap = new AtomicLong();
      ScheduledExecutorService sampler = Executors.newSingleThreadScheduledExecutor();
      Runtime rt = Runtime.getRuntime();
      sampler.scheduleAtFixedRate(
          () -> peakHeap.accumulateAndGet(rt.totalMemory() - rt.freeMemory(), Math::max), 0, 200, TimeUnit.MILLISECONDS);

      out.printf("inplace bench: %d nodes, window %d, %.1fs per node (after one untimed warm-up wave)%n",
          nodes, window, perNode.toMillis() / 1000.0);
      // Warm-up: the first workflow tasks of a fresh JVM load and compile classes; not measured.
      Duration patience = Duration.ofMillis((long) Math.ceil((double) nodes / window) * perNode.toMillis() * 3).plusSeconds(30);
      upgradePool(client, WorkflowIds.TASK_QUEUE, warmup, window, patience, out);
      long start = System.nanoTime();
      WorkersUpgradeResult result = upgradePool(client, WorkflowIds.TASK_QUEUE, cluster, window, patience, out);
      double wall = (System.nanoTime() - start) / 1e9;
      sampler.shutdownNow();
      factory.shutdown();

      String parentId = WorkflowIds.workersUpgrade(cluster.namespace(), cluster.name(), BenchEstate.POOL, TO);
      String timeline = System.getenv(DemoTimeline.ENV);
      if (timeline != null && !timeline.isBlank()) {
        // The parent's last run as a timeline (seconds since the timed part started; docs/benchmarks.md).
        long zeroMillis = System.currentTimeMillis() - (System.nanoTime() - start) / 1_000_000;
        DemoTimeline.write(Path.of(timeline), client, List.of(parentId), zeroMillis);
      }
      int maxEvents = parentChainMaxEvents(client, parentId);
      // The children are the bench's timers, not node upgrades: only the parent's chain is counted here.
      orchestration = parentChainActions(client, parentId);
      for (int i = 0; i < nodes; i++) {
        maxEvents = Math.max(maxEvents,
            client.fetchHistory(WorkflowIds.nodeUpgrade(cluster.namespace(), cluster.name() + "-worker-" + i, TO))
                .getEvents().size());
      }
      double ideal = Math.ceil((double) nodes / window) * perNode.toMillis() / 1000.0;
      figures = new Figures(nodes, window, perNode.toMillis() / 1000.0, round(wall), round(ideal), round(wall / ideal),
          maxEvents, result.runs(), peakHeap.get() >> 20, result.upgraded(), 0, 0, orchestration.byKind(), Map.of());
    }
    out.println("inplace bench: upgrading one worker node for real to count its NodeUpgrade run's actions");
    BillableActions nodeRun = RealNodeRun.workerNodeActions();
    double perNodeActions = (double) orchestration.total() / nodes + nodeRun.total();
    return new Figures(figures.nodes(), figures.window(), figures.nodeSeconds(), figures.wallSeconds(),
        figures.idealSeconds(), figures.ratio(), figures.maxHistoryEvents(), figures.runs(), figures.workerHeapMiB(),
        figures.upgraded(), Math.round(perNodeActions * 10) / 10.0, Math.round(perNodeActions * 100),
        orchestration.byKind(), nodeRun.byKind());
  }

  /** Every billable action of the parent's runs, walking back through continue-as-new. */
  private static BillableActions parentChainActions(WorkflowClient client, String workflowId) {
    String runId = latestRun(client, workflowId).getExecution().getRunId();
    BillableActions actions = new BillableActions();
    while (!runId.isEmpty()) {
      List<HistoryEvent> events = client.fetchHistory(workflowId, runId).getEvents();
      actions.add(events);
      runId = events.get(0).getWorkflowExecutionStartedEventAttributes().getContinuedExecutionRunId();
    }
    return actions;
  }

  /**
   * Upgrades the pool; a run that has not ended after {@code patience} (three times the ideal, and
   * 30 s) is a bug: the bench prints where it stands (the parent's phase and every node not done,
   * with its child's status) and fails instead of waiting forever.
   */
  private static WorkersUpgradeResult upgradePool(
      WorkflowClient client, String taskQueue, ClusterRef cluster, int window, Duration patience, PrintStream out) {
    WorkersUpgradeWorkflow workers = UpgradeRuns.startWorkers(client, taskQueue, new WorkersUpgradeRequest(
        cluster, BenchEstate.POOL, template(), Integer.toString(window), FailurePolicy.HALT, 0, 0, null, null));
    try {
      return WorkflowStub.fromTyped(workers).getResult(patience.toMillis(), TimeUnit.MILLISECONDS, WorkersUpgradeResult.class);
    } catch (java.util.concurrent.TimeoutException e) {
      UpgradeProgress progress = workers.progress();
      out.printf("inplace bench: the run of %s has not ended after %s: %s, %s%n", cluster, patience, progress.phase(),
          progress.message());
      for (NodeStatus node : progress.nodes()) {
        if (node.phase() != NodePhase.UPGRADED) {
          out.printf("  %s %s %s %s%n", node.node(), node.phase(), node.message(),
              node.workflowId() == null ? "" : childStatus(client, node.workflowId()));
        }
      }
      throw new IllegalStateException("the run of " + cluster + " did not end within " + patience, e);
    }
  }

  private static String childStatus(WorkflowClient client, String workflowId) {
    try {
      return workflowId + " " + latestRun(client, workflowId).getStatus();
    } catch (RuntimeException e) {
      return workflowId + " (" + e.getMessage() + ")";
    }
  }

  /** The latest run of the workflow, as the server describes it. */
  private static WorkflowExecutionInfo latestRun(WorkflowClient client, String workflowId) {
    return client.getWorkflowServiceStubs().blockingStub()
        .describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
            .setNamespace(client.getOptions().getNamespace())
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId))
            .build())
        .getWorkflowExecutionInfo();
  }

  /** The largest history among the parent's runs, walking back through continue-as-new. */
  private static int parentChainMaxEvents(WorkflowClient client, String workflowId) {
    String runId = latestRun(client, workflowId).getExecution().getRunId();
    int max = 0;
    while (!runId.isEmpty()) {
      List<HistoryEvent> events = client.fetchHistory(workflowId, runId).getEvents();
      max = Math.max(max, events.size());
      runId = events.get(0).getWorkflowExecutionStartedEventAttributes().getContinuedExecutionRunId();
    }
    return max;
  }

  private static NodeUpgradeTemplate template() {
    Artifact binary = new Artifact("k3s", ArtifactKind.BINARY, "/bench/k3s", "0".repeat(64), 1, "/usr/local/bin/k3s", "0755");
    return new NodeUpgradeTemplate(Distribution.K3S, TO, List.of(binary), HostProfile.k3sDefaults(),
        new SshSettings("inplace", 22, "bench-ssh-key", "bench-known-hosts", null), DrainOptions.defaults(), 60, 0, "amd64");
  }

  private static double round(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  public static final String USAGE =
      """
      usage: inplace bench [--nodes N] [--max-unavailable W] [--node-seconds S]
        --nodes N             workers in the pool (default 100, at most 5000)
        --max-unavailable W   window: nodes upgraded at once (default 10)
        --node-seconds S      simulated time of one node's upgrade (default 2.0)
      The last line printed is one JSON object with the figures, among them Temporal Cloud's billable
      actions per node upgrade and per 100-node pool (afterwards one worker node of the demo's estate is
      upgraded for real, to count what its NodeUpgrade run costs; docs/benchmarks.md).
      """;

  /** {@code bench --nodes N --max-unavailable W [--node-seconds S]}; the JSON line is always last. */
  public static int main(List<String> args, PrintStream out) throws Exception {
    int nodes = 100;
    int window = 10;
    double nodeSeconds = 2.0;
    for (int i = 0; i < args.size(); i++) {
      String a = args.get(i);
      switch (a) {
        case "--nodes" -> nodes = positive(a, args, ++i);
        case "--max-unavailable" -> window = positive(a, args, ++i);
        case "--node-seconds" -> nodeSeconds = seconds(a, args, ++i);
        case "--json" -> { } // the JSON line is always printed
        default -> throw new IllegalArgumentException("unknown option '" + a + "'");
      }
    }
    if (nodes > 5000 || nodeSeconds < 0.1 || nodeSeconds > 600) {
      throw new IllegalArgumentException("--nodes must be 1..5000 and --node-seconds 0.1..600");
    }
    Figures f = run(nodes, window, Duration.ofMillis((long) (nodeSeconds * 1000)), out);
    out.printf("%d nodes upgraded in %.1fs (ideal %.1fs, ratio %.3f); largest history %d events over %d run(s);"
            + " peak heap %d MiB; %.1f Temporal Cloud actions per node upgrade, %d per 100-node pool%n",
        f.upgraded(), f.wallSeconds(), f.idealSeconds(), f.ratio(), f.maxHistoryEvents(),
        f.runs(), f.workerHeapMiB(), f.actionsPerNode(), f.actionsPer100NodePool());
    out.println(new ObjectMapper().writeValueAsString(f));
    return f.upgraded() == nodes ? 0 : 1;
  }

  private static double seconds(String flag, List<String> args, int i) {
    try {
      return Double.parseDouble(value(flag, args, i));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a number of seconds");
    }
  }

  private static int positive(String flag, List<String> args, int i) {
    try {
      int v = Integer.parseInt(value(flag, args, i));
      if (v < 1) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a whole number >= 1");
    }
  }

  private static String value(String flag, List<String> args, int i) {
    if (i >= args.size()) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args.get(i);
  }
}
