package dev.inplace.sandbox.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.client.UpgradeRuns;
import dev.inplace.sandbox.demo.DemoTimeline;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.sandbox.stack.ProcessDemo;
import dev.inplace.sandbox.stack.RemoteEstate;
import dev.inplace.sandbox.stack.StackLayout;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * {@code ./inplace bench --e2e}: the whole path of a worker pool's upgrade, real SSH to real hosts
 * (MINA or one OpenSSH sshd per node), drains, verify and bookkeeping, with the worker in its own
 * process (the local stack: Temporal's test server, the estate, one worker), so its CPU and peak RSS
 * are its own. The control plane (one node) is upgraded first, untimed: it warms the worker up and
 * workers must not be newer than it. Then the WorkersUpgrade of {@code --nodes} workers with a window
 * of {@code --max-unavailable} is timed. Before it, {@link LinkProbe} times plain {@code scp} of the
 * artifact to a node (the link rate) and the product's SFTP upload of the same file to the same sshd,
 * three alternating rounds each way.
 */
public final class E2eBenchmark {
  public static final String USAGE =
      """
      usage: inplace bench --e2e [--nodes N] [--max-unavailable W] [--binary-size-mib M] [--restart-seconds R]
                           [--hosts mina|openssh]
        --nodes N             workers in the pool (default 20, at most 200)
        --max-unavailable W   window: workers upgraded at once (default 5)
        --binary-size-mib M   size of the k3s binary pushed to each node (default 16)
        --restart-seconds R   how long a restarted kubelet stays NotReady (default 2)
        --hosts KIND          mina (default) or openssh (one real sshd per node; root and openssh-server)
      Runs the local stack (worker in its own process) in a temporary directory; needs its fixed
      loopback ports (run under flock /tmp/inplace-it.lock). The last line printed is one JSON object.
      """;

  private E2eBenchmark() {}

  /** Options of one run. */
  record Options(int nodes, int window, int binaryMiB, double restartSeconds, String hosts) {
    static Options parse(List<String> args) {
      int nodes = 20;
      int window = 5;
      int mib = 16;
      double restart = 2;
      String hosts = "mina";
      for (int i = 0; i < args.size(); i++) {
        String a = args.get(i);
        switch (a) {
          case "--e2e", "--json" -> { }
          case "--nodes" -> nodes = whole(a, value(a, args, ++i));
          case "--max-unavailable" -> window = whole(a, value(a, args, ++i));
          case "--binary-size-mib" -> mib = whole(a, value(a, args, ++i));
          case "--restart-seconds" -> restart = seconds(a, value(a, args, ++i));
          case "--hosts" -> hosts = value(a, args, ++i);
          default -> throw new IllegalArgumentException("unknown option '" + a + "'");
        }
      }
      if (nodes > 200) {
        throw new IllegalArgumentException("--nodes must be 1..200 with --e2e");
      }
      if (mib > 512) {
        throw new IllegalArgumentException("--binary-size-mib must be 1..512");
      }
      if (!(restart >= 0 && restart <= 600)) {
        throw new IllegalArgumentException("--restart-seconds must be 0..600");
      }
      if (!List.of("mina", "openssh").contains(hosts)) {
        throw new IllegalArgumentException("--hosts must be mina or openssh, got '" + hosts + "'");
      }
      return new Options(nodes, window, mib, restart, hosts);
    }

    /** The estate's options, as the demo takes them. */
    List<String> estateArgs() {
      return List.of("--control-planes", "1", "--pools", "1", "--workers", Integer.toString(nodes),
          "--max-unavailable", Integer.toString(window), "--binary-size-mib", Integer.toString(binaryMiB),
          "--restart-seconds", Double.toString(restartSeconds), "--hosts", hosts,
          "--drain-timeout", "120", "--ready-timeout", "120");
    }
  }

  public static int main(List<String> args, PrintStream out) throws Exception {
    Options options = Options.parse(args);
    Path dir = Files.createTempDirectory("inplace-bench-e2e-");
    StackLayout layout = new StackLayout(dir);
    // Ctrl-C or a timeout's SIGTERM: stop the stack's processes (and their sshd) too.
    Thread onInterrupt = new Thread(() -> LocalStack.down(layout), "inplace-bench-down");
    Runtime.getRuntime().addShutdownHook(onInterrupt);
    boolean complete = false;
    try {
      E2eFigures figures = run(options, layout, out);
      complete = figures.upgraded() == options.nodes();
      out.printf("%d/%d workers upgraded in %.1fs (ideal %.1fs, ratio %.3f); per-node overhead median %.2fs p95 %.2fs"
              + " (in the window; preflight to end median %.2fs);"
              + " worker %.2f CPU-s/node, peak RSS %d MiB; SFTP %.1f MiB/s, scp %.1f MiB/s (%.2fx)%n",
          figures.upgraded(), figures.nodes(), figures.wallSeconds(), figures.idealSeconds(), figures.ratio(),
          figures.perNodeOverheadSeconds().median(), figures.perNodeOverheadSeconds().p95(),
          figures.nodeSpanSeconds().median(),
          figures.workerCpuSecondsPerNode(), figures.workerPeakRssMiB(), figures.sftpMiBps(), figures.scpMiBps(),
          figures.sftpToScp());
      StackCpu cpu = figures.cpuSeconds();
      out.printf("CPU-s in the timed part: worker %.1f (JIT %.1f), Temporal %.1f (JIT %.1f), estate %.1f (JIT %.1f),"
              + " hosts %.1f; machine busy %.1f, idle %.1f%n",
          cpu.worker(), cpu.workerJit(), cpu.temporal(), cpu.temporalJit(), cpu.estate(), cpu.estateJit(), cpu.hosts(),
          cpu.machineBusy(), cpu.machineIdle());
      out.println(new ObjectMapper().writeValueAsString(figures));
      return complete ? 0 : 1;
    } finally {
      if (complete) {
        LocalStack.deleteTree(dir);
      } else {
        // The processes' logs say why (a failure's message names them): keep them, drop the rest.
        keepOnly(dir, layout.logs());
        System.err.println("inplace bench: the stack's logs are kept in " + layout.logs());
      }
      try {
        Runtime.getRuntime().removeShutdownHook(onInterrupt);
      } catch (IllegalStateException shuttingDown) {
        // the hook runs (or ran) anyway
      }
    }
  }

  /** Deletes everything under {@code dir} but {@code keep} (a direct child of it). */
  static void keepOnly(Path dir, Path keep) throws IOException {
    if (!Files.isDirectory(dir)) {
      return;
    }
    try (var children = Files.list(dir)) {
      for (Path child : children.toList()) {
        if (!child.equals(keep)) {
          LocalStack.deleteTree(child);
        }
      }
    }
  }

  static E2eFigures run(Options options, StackLayout layout, PrintStream out) throws Exception {
    out.printf("inplace bench --e2e: %d workers, window %d, %d MiB, restart %.1fs, %s hosts; starting the local stack%n",
        options.nodes(), options.window(), options.binaryMiB(), options.restartSeconds(), options.hosts());
    try (LocalStack stack = LocalStack.up(layout, new LocalStack.Spec(1, options.estateArgs(), false, false), out)) {
      long workerPid = stack.pid(StackLayout.worker(1)).orElseThrow();
      WorkflowServiceStubs service = ProcessDemo.connect();
      try (RemoteEstate estate = RemoteEstate.open(layout)) {
        WorkflowClient client = WorkflowClient.newInstance(
            service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
        String to = estate.description().toVersion();
        ReleaseCatalogue.Release release = ReleaseCatalogue.parse(
            Files.readString(estate.catalogue()), estate.catalogue().toString()).find(to, Distribution.K3S, "amd64");
        NodeUpgradeTemplate template = new NodeUpgradeTemplate(
            Distribution.K3S, to, release.artifacts(), Distribution.K3S.defaultProfile(), estate.ssh(),
            new DrainOptions(120, true, false, PdbBlockedAction.FAIL, false), 120, 0, release.arch());

        Estate.EstateNode probe = estate.nodes().stream().filter(n -> n.role() == NodeRole.WORKER).findFirst()
            .orElseThrow();
        Path artifact = layout.estateDir().resolve("artifacts").resolve(to).resolve("k3s");
        LinkProbe.Samples copies = new LinkProbe(estate, layout, probe, artifact).measure(out);

        out.println("upgrading the control plane (untimed warm-up)");
        ControlPlaneUpgradeWorkflow cp = UpgradeRuns.startControlPlane(
            client, WorkflowIds.TASK_QUEUE, new ControlPlaneUpgradeRequest(estate.cluster(), template, 0, null));
        WorkflowStub.fromTyped(cp).getResult(Object.class);

        ProcessStats worker = new ProcessStats(workerPid);
        long temporalPid = stack.pid(StackLayout.TEMPORAL).orElse(-1L);
        long estatePid = stack.pid(StackLayout.ESTATE).orElse(-1L);
        StackCpu.Reading stackBefore = StackCpu.read(workerPid, temporalPid, estatePid);
        double cpuBefore = worker.cpuSeconds();
        out.println("upgrading the workers (timed)");
        long start = System.nanoTime();
        WorkersUpgradeWorkflow workers = UpgradeRuns.startWorkers(client, WorkflowIds.TASK_QUEUE, new WorkersUpgradeRequest(
            estate.cluster(), estate.pools().get(0), template, Integer.toString(options.window()), FailurePolicy.HALT,
            0, 0, null, null));
        WorkflowStub.fromTyped(workers).getResult(Object.class);
        double wall = (System.nanoTime() - start) / 1e9;
        double cpu = worker.cpuSeconds() - cpuBefore;
        StackCpu stackCpu = StackCpu.between(stackBefore, StackCpu.read(workerPid, temporalPid, estatePid),
            ProcessStats.clockTicks());
        long rss = worker.peakRssKiB();

        UpgradeProgress progress = workers.progress();
        List<Double> nodeWalls = new ArrayList<>();
        List<Double> nodeSpans = new ArrayList<>();
        Map<String, List<Double>> steps = new LinkedHashMap<>();
        long upgraded = 0;
        for (NodeStatus n : progress.nodes()) {
          if (n.phase() != NodePhase.UPGRADED) {
            continue;
          }
          upgraded++;
          nodeWalls.add((n.finishedMillis() - n.startedMillis()) / 1000.0);
          NodeProgress child = client.newUntypedWorkflowStub(n.workflowId()).query("progress", NodeProgress.class);
          child.steps().stream().mapToLong(StepRecord::startedMillis).filter(t -> t > 0).min()
              .ifPresent(first -> nodeSpans.add((n.finishedMillis() - first) / 1000.0));
          for (StepRecord s : child.steps()) {
            steps.computeIfAbsent(s.step().cliName(), k -> new ArrayList<>())
                .add((s.finishedMillis() - s.startedMillis()) / 1000.0);
          }
        }
        timeline(client, workers, progress, start);
        return E2eFigures.of(new E2eFigures.Measured(
            options.hosts(), options.nodes(), options.window(), options.binaryMiB(), options.restartSeconds(), upgraded,
            wall, nodeWalls, nodeSpans, steps, cpu, rss, copies.scpSeconds(), copies.sftpSeconds())).withCpu(stackCpu);
      } finally {
        service.shutdownNow();
      }
    }
  }

  /**
   * With INPLACE_DEMO_TIMELINE set, the timed runs' histories as one timeline (seconds since the timed
   * part started), read after the figures were taken (docs/benchmarks.md).
   */
  private static void timeline(WorkflowClient client, WorkersUpgradeWorkflow workers, UpgradeProgress progress,
      long startNanos) {
    String file = System.getenv(DemoTimeline.ENV);
    if (file == null || file.isBlank()) {
      return;
    }
    List<String> ids = new ArrayList<>();
    ids.add(WorkflowStub.fromTyped(workers).getExecution().getWorkflowId());
    progress.nodes().stream().map(NodeStatus::workflowId).filter(id -> id != null && !id.isEmpty()).forEach(ids::add);
    long zeroMillis = System.currentTimeMillis() - (System.nanoTime() - startNanos) / 1_000_000;
    DemoTimeline.write(Path.of(file), client, ids, zeroMillis);
  }

  private static String value(String flag, List<String> args, int i) {
    if (i >= args.size() || args.get(i).startsWith("--")) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args.get(i);
  }

  private static int whole(String flag, String text) {
    try {
      int v = Integer.parseInt(text);
      if (v < 1) {
        throw new NumberFormatException();
      }
      return v;
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a whole number >= 1, got '" + text + "'");
    }
  }

  private static double seconds(String flag, String text) {
    try {
      return Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a number of seconds, got '" + text + "'");
    }
  }
}
