package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoSummary;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.sandbox.stack.ProcessDemo;
import dev.inplace.sandbox.stack.RemoteEstate;
import dev.inplace.sandbox.stack.StackLayout;
import dev.inplace.sandbox.stack.TemporalServer;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.StatusRuntimeException;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.PendingActivityState;
import io.temporal.api.workflow.v1.PendingActivityInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.io.TempDir;

/**
 * The local stack of real processes: Temporal (its Java test server, and the real server as the
 * test bed's dev server), the estate and two workers, each its own process. The demo's resources are applied and, while a node's upgrade has a heartbeating activity in
 * flight on one worker, that worker gets SIGKILL; the run must finish on the other with every node
 * upgraded, as the workload API server (ground truth, not the product's report) shows. On the test
 * server the workers run without sticky execution (it never moves a dead worker's workflow tasks off
 * its sticky queue); on the dev server with it, as in production, and the server's own fallback from
 * the dead worker's sticky queue (after 5 s) lets the other worker go on. The chaos
 * campaign's smallest case (one kill, no restart), in its package so that the sandbox's failsafe
 * (alphabetical order) starts the three stack-based classes first.
 */
class LocalStackWorkerKillIT {
  /** Activities that heartbeat: a killed worker's attempt is retried elsewhere after its heartbeat timeout. */
  private static final Set<String> HEARTBEATING = Set.of("AwaitNodeVersion", "DrainNode", "StageArtifacts");

  @TempDir Path dir;

  @ParameterizedTest(name = "on Temporal''s {0}")
  @EnumSource(TemporalServer.class)
  void aWorkerKilledMidNodeUpgradeLeavesTheRunToTheOtherWorker(TemporalServer server) throws Exception {
    List<String> args = List.of("--control-planes", "1", "--pools", "1", "--workers", "2", "--binary-size-mib", "8");
    DemoOptions options = DemoOptions.parse(args.toArray(String[]::new));
    StackLayout layout = new StackLayout(dir.resolve("stack"));
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
    List<Long> pids = new ArrayList<>();
    LocalStack.Spec spec = new LocalStack.Spec(2, DemoOptions.estateArgs(args), false, true, server);
    try (LocalStack stack = LocalStack.up(layout, spec, out)) {
      assertEquals(server == TemporalServer.TEST_SERVER,
          stack.workerEnvironment(1).containsKey("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS"),
          "sticky execution off on the test server only");
      long worker1 = stack.pid(StackLayout.worker(1)).orElseThrow();
      long worker2 = stack.pid(StackLayout.worker(2)).orElseThrow();
      pids.addAll(List.of(stack.pid("temporal").orElseThrow(), stack.pid("estate").orElseThrow(), worker1, worker2));
      assertEquals(4, new HashSet<>(pids).size());
      assertFalse(pids.contains(ProcessHandle.current().pid()));

      CompletableFuture<DemoSummary> demo = CompletableFuture.supplyAsync(() -> ProcessDemo.follow(stack, options, out));
      WorkflowServiceStubs service = ProcessDemo.connect();
      Kill kill;
      try (RemoteEstate estate = RemoteEstate.open(layout)) {
        kill = killMidActivity(stack, service, estate, options.to(), Map.of(worker1, 1, worker2, 2));
      } finally {
        service.shutdownNow();
      }
      long killedAt = System.nanoTime();
      DemoSummary summary = demo.get(150, TimeUnit.SECONDS);
      String output = printed.toString(StandardCharsets.UTF_8) + "\nkilled " + kill;
      System.out.printf("LocalStackWorkerKillIT (%s): SIGKILL of %s; the run finished %.1f s later on the other worker%n",
          server.cliName(), kill, (System.nanoTime() - killedAt) / 1e9);

      assertFalse(ProcessHandle.of(kill.pid()).map(ProcessHandle::isAlive).orElse(false), output);
      int survivor = kill.worker() == 1 ? 2 : 1;
      assertTrue(stack.pid(StackLayout.worker(survivor)).isPresent(), "the other worker still runs\n" + output);
      assertEquals(3, summary.nodes(), output);
      assertEquals(3, summary.upgraded(), output);
      @SuppressWarnings("unchecked")
      List<Long> workers = (List<Long>) summary.processes().get("workers");
      assertEquals(List.of(worker1, worker2), workers, "the workers' PIDs when the demo began\n" + output);
      assertNotEquals(ProcessHandle.current().pid(), summary.processes().get("estate"));

      // Ground truth from the workload API server: every node at the target, Ready and schedulable.
      String kubeconfig = Files.readString(layout.workloadKubeconfig());
      try (KubernetesClient workload = new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeconfig)).build()) {
        List<Node> nodes = workload.nodes().list().getItems();
        assertEquals(3, nodes.size());
        for (Node node : nodes) {
          assertEquals(options.to(), node.getStatus().getNodeInfo().getKubeletVersion(), node.getMetadata().getName() + "\n" + output);
          assertFalse(Boolean.TRUE.equals(node.getSpec().getUnschedulable()), node.getMetadata().getName() + " left cordoned");
        }
      }
    }
    for (long pid : pids) {
      assertFalse(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false), "pid " + pid + " left running by down");
    }
  }

  /** The worker killed, its PID, and what it was doing. */
  private record Kill(int worker, long pid, String node, String activity) {}

  /**
   * Waits for a node's heartbeating activity to be in flight on one of the workers, then SIGKILLs that
   * worker. The worker is known from the activity's last worker identity ({@code pid@host}).
   */
  private static Kill killMidActivity(
      LocalStack stack, WorkflowServiceStubs service, RemoteEstate estate, String version, Map<Long, Integer> workers)
      throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      for (Estate.EstateNode node : estate.nodes()) {
        String id = WorkflowIds.nodeUpgrade(Estate.NAMESPACE, node.machine(), version);
        for (PendingActivityInfo activity : pending(service, id)) {
          Optional<Long> pid = pidOf(activity.getLastWorkerIdentity());
          if (activity.getState() == PendingActivityState.PENDING_ACTIVITY_STATE_STARTED
              && HEARTBEATING.contains(activity.getActivityType().getName())
              && pid.isPresent()
              && workers.containsKey(pid.get())) {
            int worker = workers.get(pid.get());
            stack.killWorker(worker);
            return new Kill(worker, pid.get(), node.name(), activity.getActivityType().getName());
          }
        }
      }
      Thread.sleep(50);
    }
    throw new AssertionError("no heartbeating activity seen in flight on a worker within 90 s");
  }

  private static List<PendingActivityInfo> pending(WorkflowServiceStubs service, String workflowId) {
    try {
      return service.blockingStub()
          .describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
              .setNamespace("default")
              .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId))
              .build())
          .getPendingActivitiesList();
    } catch (StatusRuntimeException e) {
      return List.of(); // not started yet
    }
  }

  private static Optional<Long> pidOf(String identity) {
    int at = identity.indexOf('@');
    try {
      return at > 0 ? Optional.of(Long.parseLong(identity.substring(0, at))) : Optional.empty();
    } catch (NumberFormatException e) {
      return Optional.empty();
    }
  }
}
