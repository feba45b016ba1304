package dev.inplace.sandbox;

import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.sandbox.bench.WorkersBenchmark;
import dev.inplace.sandbox.chaos.ChaosMain;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoRun;
import dev.inplace.sandbox.demo.DemoSummary;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.sandbox.stack.ProcessDemo;
import dev.inplace.sandbox.stack.StackLayout;
import dev.inplace.sandbox.stack.StackMain;
import dev.inplace.sandbox.kube.ApiRequest;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.client.TemporalConnection;
import dev.inplace.workflows.api.WorkflowIds;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.FileVisitResult;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.SimpleFileVisitor;
import java.nio.file.attribute.BasicFileAttributes;
import java.util.Arrays;
import java.util.Set;
import java.util.function.Consumer;

/**
 * Entry point of {@code ./inplace demo}: builds the simulated estate, starts the embedded Temporal
 * server and a worker in this process, and upgrades the cluster. Exit code 0 only if every node
 * reached the target, 1 otherwise, 2 for a usage error.
 */
public final class SandboxMain {
  private SandboxMain() {}

  public static void main(String[] args) throws Exception {
    if (args.length > 0 && "bench".equals(args[0])) {
      System.exit(bench(Arrays.copyOfRange(args, 1, args.length)));
    }
    if (args.length > 0 && "chaos".equals(args[0])) {
      System.exit(ChaosMain.main(Arrays.asList(args).subList(1, args.length), System.out, System.err));
    }
    if (args.length > 0 && java.util.Set.of("up", "down", "apply-demo-crs").contains(args[0])) {
      System.exit(StackMain.main(args[0], Arrays.asList(args).subList(1, args.length), System.out, System.err));
    }
    if (args.length == 0 || !"demo".equals(args[0])) {
      System.err.println("usage: inplace demo|bench|chaos|up|down [options]   (--help for options)");
      System.exit(2);
    }
    String[] rest = Arrays.copyOfRange(args, 1, args.length);
    if (Arrays.asList(rest).contains("--help")) {
      System.out.print(DemoOptions.USAGE);
      return;
    }
    DemoOptions options;
    try {
      if (dev.inplace.sandbox.demo.RealKubeDemo.wanted(Arrays.asList(rest))) {
        System.exit(realKubeDemo(dev.inplace.sandbox.demo.RealKubeDemo.parse(Arrays.asList(rest)), System.out) ? 0 : 1);
        return;
      }
      rest = dev.inplace.sandbox.demo.RealKubeDemo.withoutKube(rest);
      options = DemoOptions.parse(rest);
    } catch (IllegalArgumentException e) {
      System.err.println("inplace demo: " + e.getMessage());
      System.err.print(DemoOptions.USAGE);
      System.exit(2);
      return;
    }
    if (options.topology() == DemoOptions.Topology.PROCESSES) {
      System.exit(processDemo(options, Arrays.asList(rest), System.out) ? 0 : 1);
    }
    System.exit(demo(options, System.out) ? 0 : 1);
  }

  /** The demo through the local stack of processes, in a directory of its own. */
  private static boolean processDemo(DemoOptions options, java.util.List<String> args, PrintStream out) throws IOException {
    Path dir = Files.createTempDirectory("inplace-demo-stack-");
    boolean done = false;
    try {
      DemoSummary summary;
      try {
        summary = ProcessDemo.run(new StackLayout(dir), options, args, out);
      } catch (LocalStack.StackException e) {
        System.err.println("inplace demo: " + e.getMessage());
        return false;
      }
      if (options.json()) {
        out.println(new ObjectMapper().writeValueAsString(summary));
      }
      done = summary.allUpgraded();
      return done;
    } finally {
      if (options.keep()) {
        out.println("stack directory kept in " + dir);
      } else {
        LocalStack.deleteTree(dir);
      }
    }
  }

  private static int bench(String[] args) throws Exception {
    boolean e2e = Arrays.asList(args).contains("--e2e");
    String usage = e2e ? dev.inplace.sandbox.bench.E2eBenchmark.USAGE : WorkersBenchmark.USAGE;
    if (Arrays.asList(args).contains("--help")) {
      System.out.print(usage);
      return 0;
    }
    try {
      return e2e
          ? dev.inplace.sandbox.bench.E2eBenchmark.main(Arrays.asList(args), System.out)
          : WorkersBenchmark.main(Arrays.asList(args), System.out);
    } catch (IllegalArgumentException e) {
      System.err.println("inplace bench: " + e.getMessage());
      System.err.print(usage);
      return 2;
    } catch (LocalStack.StackException e) {
      System.err.println("inplace bench: " + e.getMessage());
      return 1;
    }
  }

  /** The demo on the test bed's real API servers and Cluster API ({@code --kube real}); true if every node was upgraded in place. */
  private static boolean realKubeDemo(dev.inplace.sandbox.demo.RealKubeDemo.Options options, PrintStream out) throws Exception {
    Path dir = Files.createTempDirectory("inplace-demo-real-");
    try {
      DemoSummary summary = dev.inplace.sandbox.demo.RealKubeDemo.run(options, dir, out);
      if (options.json()) {
        out.println(new ObjectMapper().writeValueAsString(summary));
      }
      return summary.allUpgraded();
    } finally {
      deleteTree(dir);
    }
  }

  /** Runs the demo; true if every node was upgraded. */
  static boolean demo(DemoOptions options, PrintStream out) throws IOException {
    return demo(options, out, requests -> {});
  }

  /**
   * Runs the demo and hands over what the worker asked the management API server for, before the
   * estate stops (RbacCoverageIT checks it against deploy/'s RBAC); true if every node was upgraded.
   */
  public static boolean demo(DemoOptions options, PrintStream out, Consumer<Set<ApiRequest>> workerRequests)
      throws IOException {
    Path dir = Files.createTempDirectory("inplace-demo-");
    try {
      DemoSummary summary;
      try (Estate estate = Estate.create(dir, options.estateSpec())) {
        for (DemoOptions.Fault fault : options.faults()) {
          if (fault.kairosFault() != null) {
            estate.armKairos(fault.node(), fault.kairosFault());
          } else {
            estate.arm(fault.node(), fault.step());
          }
          out.printf("fault armed: %s will fail at %s%n", fault.node(), fault.label());
        }
        Path artifactCache = dir.resolve("artifact-cache");
        try (TemporalConnection temporal = EmbeddedTemporal.start();
            InplaceWorker worker =
                InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, estate.workerManagement(), artifactCache,
                    estate.artifactPolicy())) {
          summary = new DemoRun(estate, temporal.client(), WorkflowIds.TASK_QUEUE, options, out).run();
        }
        // Ground truth of the hosts' side: a refusal before any host step made no SSH session at all.
        estate.sshSessions().ifPresent(n -> out.printf("SSH sessions to the hosts: %d%n", n));
        workerRequests.accept(estate.workerRequests());
      }
      if (options.keep()) {
        out.println("estate kept in " + dir);
      }
      if (options.json()) {
        out.println(new ObjectMapper().writeValueAsString(summary));
      }
      return summary.allUpgraded();
    } finally {
      if (!options.keep()) {
        deleteTree(dir);
      }
    }
  }

  private static void deleteTree(Path dir) throws IOException {
    if (!Files.exists(dir)) {
      return;
    }
    Files.walkFileTree(dir, new SimpleFileVisitor<>() {
      @Override
      public FileVisitResult visitFile(Path file, BasicFileAttributes attrs) throws IOException {
        Files.delete(file);
        return FileVisitResult.CONTINUE;
      }

      @Override
      public FileVisitResult postVisitDirectory(Path d, IOException e) throws IOException {
        Files.delete(d);
        return FileVisitResult.CONTINUE;
      }
    });
  }
}
