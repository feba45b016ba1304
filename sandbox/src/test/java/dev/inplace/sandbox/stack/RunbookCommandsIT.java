package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.UpgradeRuns;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.truth.EstateReport;
import dev.inplace.sandbox.truth.HostJournal;
import dev.inplace.sandbox.truth.JournalAudit;
import dev.inplace.sandbox.truth.JournalEntry;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeResult;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Every command block of docs/runbook.md, as written, run by the {@code temporal} CLI v1.5.1 (the
 * test bed's) as a real subprocess against the real Temporal server of the local stack ({@code
 * --temporal dev-server}) on inplace's own runs, whose worker upgrades the stack's SSH hosts; each
 * block's effect is read back from the runs (their {@code progress}) and from the ground truth (the
 * workload API server, the hosts' journals):
 *
 * <ul>
 *   <li>pool a: paused at its start (no node starts), resumed; worker-a-1 fails verify, is retried
 *       with {@code retryNode} and upgraded; worker-a-2 fails verify, its NodeUpgrade is reset to its
 *       safe point (the page's rule: after the backup) and the parent records it retried and upgraded;
 *       the reset run ran neither stage nor backup again, and no destructive step was repeated;
 *   <li>pool b: worker-b-0 fails at stage and is skipped; abort while worker-b-1 is in flight: it
 *       finishes, worker-b-2 never starts;
 *   <li>pool c: terminated while worker-c-0 is in flight and worker-c-1 waits for its permit: c-0's
 *       child rolls its node back on its own, c-1 is found by the page's list query and let go by the
 *       permit signal, c-2 never starts;
 *   <li>the list queries on inplace's search attributes, and describe, show and query of a run.
 * </ul>
 */
class RunbookCommandsIT {
  private static final String CLUSTER = Estate.NAMESPACE + "/" + Estate.CLUSTER;
  private static final List<String> ESTATE_ARGS = List.of("--control-planes", "1", "--pools", "3", "--workers", "3",
      "--binary-size-mib", "1",
      "--fail", "worker-a-1:verify", "--fail", "worker-a-2:verify", "--fail", "worker-b-0:stage",
      "--fail", "worker-c-0:verify");
  private static final Duration CLI_TIMEOUT = Duration.ofSeconds(60);
  /** The blocks of docs/runbook.md this test runs: all of them ({@link RunbookBlocksTest} holds the page to it). */
  static final Set<String> BLOCKS_RUN = Set.of(
      "list", "node-run", "run-progress", "pause", "resume", "retry", "skip", "abort", "reset", "terminate",
      "left-running", "permit");
  /** Every block run, with its variables, exit status and output, kept for a look after the test. */
  private static final Path TRANSCRIPT = Path.of("target", "runbook-commands-transcript.txt");

  @TempDir Path dir;

  private final DemoOptions options = DemoOptions.parse(ESTATE_ARGS.toArray(String[]::new));
  private final StringBuilder transcript = new StringBuilder();
  private final Set<String> ran = new java.util.TreeSet<>();
  private WorkflowServiceStubs service;
  private WorkflowClient client;
  private RemoteEstate estate;

  @Test
  void everyRunbookCommandHasItsEffectOnTheRunsAndTheNodes() throws Exception {
    RunbookBlocks blocks = RunbookBlocks.read();
    StackLayout layout = new StackLayout(dir.resolve("stack"));
    PrintStream out = new PrintStream(new ByteArrayOutputStream(), true, StandardCharsets.UTF_8);
    LocalStack.Spec spec = new LocalStack.Spec(1, DemoOptions.estateArgs(ESTATE_ARGS), false, true, TemporalServer.DEV_SERVER);
    try (LocalStack stack = LocalStack.up(layout, spec, out)) {
      service = ProcessDemo.connect();
      client = WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
      estate = RemoteEstate.open(layout);
      try {
        scenario(blocks);
        assertEquals(new java.util.TreeSet<>(blocks.names()), ran, "every block of the page was run");
        assertEquals(new java.util.TreeSet<>(BLOCKS_RUN), ran);
        transcript.append("--- marks at the end ---\n");
        estate.report().nodes().forEach(n -> transcript.append(n.name()).append(' ').append(n.marks()).append('\n'));
        transcript.append("--- the reset run's history ---\n").append(run(blocks, "node-run",
            Map.of("NODE_RUN", childId("worker-a-2"))));
      } catch (AssertionError | Exception e) {
        throw new AssertionError(e.getMessage() + "\n--- transcript ---\n" + transcript
            + "\n--- worker log ---\n" + LocalStack.tailOf(Files.readString(layout.log(StackLayout.worker(1)))), e);
      } finally {
        Files.createDirectories(TRANSCRIPT.getParent());
        Files.writeString(TRANSCRIPT, transcript);
        estate.close();
        service.shutdownNow();
      }
    }
  }

  private void scenario(RunbookBlocks blocks) throws Exception {
    String from = options.from();
    String to = options.to();
    ReleaseCatalogue.Release release = ReleaseCatalogue.parse(Files.readString(estate.catalogue()), estate.catalogue().toString())
        .find(to, options.distribution(), "amd64", options.os());

    ControlPlaneUpgradeWorkflow cp = UpgradeRuns.startControlPlane(client, WorkflowIds.TASK_QUEUE,
        new ControlPlaneUpgradeRequest(estate.cluster(), template(release, 30), 0, null));
    assertEquals(1, WorkflowStub.fromTyped(cp).getResult(180, TimeUnit.SECONDS,
        ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeResult.class).upgraded());

    WorkersUpgradeWorkflow a = startPool("a", release, 10);
    String runA = WorkflowStub.fromTyped(a).getExecution().getWorkflowId();

    // pause, at once: no node of pool a starts until resume.
    assertTrue(run(blocks, "pause", Map.of("RUN", runA)).contains("paused: no new node starts"), transcript.toString());
    WorkersUpgradeWorkflow b = startPool("b", release, 10);
    WorkersUpgradeWorkflow c = startPool("c", release, 40);
    String runB = WorkflowStub.fromTyped(b).getExecution().getWorkflowId();
    String runC = WorkflowStub.fromTyped(c).getExecution().getWorkflowId();
    Thread.sleep(10_000);
    UpgradeProgress paused = a.progress();
    assertEquals(RunPhase.PAUSED, paused.phase(), paused.toString());
    assertTrue(paused.nodes().stream().allMatch(n -> n.phase() == NodePhase.PENDING), "no node started while paused: " + paused);
    assertTrue(nodesAt(from, "worker-a-0", "worker-a-1", "worker-a-2"), "pool a's nodes unchanged while paused");
    assertTrue(run(blocks, "resume", Map.of("RUN", runA)).contains("resumed"), transcript.toString());
    // A control the run refuses: the validator's reason, exit status non-zero, nothing recorded.
    Cli refused = cli(blocks.block("resume"), Map.of("RUN", runA));
    assertNotEquals(0, refused.exit(), refused.output());
    assertTrue(refused.output().contains("not paused"), refused.output());

    // Pool c: terminated while c-0 is in flight and c-1, prepared ahead, waits for its permit.
    String childC1 = childId("worker-c-1");
    awaitTrue(Duration.ofSeconds(120), "worker-c-1 prepared, waiting for its permit",
        () -> messageOf(childC1).startsWith("prepared: waiting for the parent's permit"));
    assertEquals(NodePhase.UPGRADING, node(c.progress(), "worker-c-0").phase(), "worker-c-0 in flight");
    run(blocks, "terminate", Map.of("RUN", runC));
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_TERMINATED, describe(runC).getStatus());
    awaitTrue(Duration.ofSeconds(30), "the page's list query names worker-c-1's run, still running",
        () -> quiet(() -> run(blocks, "left-running", Map.of("CLUSTER", CLUSTER)).contains(childC1)));
    run(blocks, "permit", Map.of("NODE_RUN", childC1));

    // Pool b: worker-b-0 fails at stage, is skipped; abort while worker-b-1 is in flight.
    awaitProgress(b, Duration.ofSeconds(120), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);
    assertEquals(NodePhase.FAILED, node(b.progress(), "worker-b-0").phase());
    assertTrue(run(blocks, "skip", Map.of("RUN", runB, "NODE", "worker-b-0")).contains("worker-b-0 skipped"), transcript.toString());
    awaitProgress(b, Duration.ofSeconds(60), p -> node(p, "worker-b-1").phase() == NodePhase.UPGRADING);
    assertTrue(run(blocks, "abort", Map.of("RUN", runB)).contains("aborting"), transcript.toString());
    WorkersUpgradeResult aborted = WorkflowStub.fromTyped(b).getResult(120, TimeUnit.SECONDS, WorkersUpgradeResult.class);
    assertTrue(aborted.aborted(), aborted.toString());
    Map<String, NodePhase> bPhases = aborted.nodes().stream().collect(Collectors.toMap(NodeStatus::node, NodeStatus::phase));
    assertEquals(Map.of("worker-b-0", NodePhase.SKIPPED, "worker-b-1", NodePhase.UPGRADED, "worker-b-2", NodePhase.PENDING),
        bPhases, "the node in flight finished, no other started");

    // Pool a: worker-a-1 fails verify (rolled back), the list finds the halted run, retryNode upgrades it.
    awaitProgress(a, Duration.ofSeconds(180), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0);
    assertEquals(NodePhase.ROLLED_BACK, node(a.progress(), "worker-a-1").phase(), a.progress().toString());
    String childA2 = childId("worker-a-2");
    awaitTrue(Duration.ofSeconds(30), "the page's list queries find pool a's halted run and worker-a-1's run",
        () -> quiet(() -> {
          String listed = run(blocks, "list", Map.of("CLUSTER", CLUSTER, "NODE", "worker-a-1"));
          return occurrences(listed, runA) == 2 && listed.contains(childId("worker-a-1")) && listed.contains(runB);
        }));
    estate.clearFaults("worker-a-1");
    assertTrue(run(blocks, "retry", Map.of("RUN", runA, "NODE", "worker-a-1")).contains("queued for retry"), transcript.toString());

    // worker-a-2 fails verify (rolled back); its NodeUpgrade is reset to the safe point once the cause is gone.
    awaitProgress(a, Duration.ofSeconds(180), p -> p.phase() == RunPhase.HALTED && p.inFlight() == 0
        && node(p, "worker-a-2").phase() == NodePhase.ROLLED_BACK);
    assertEquals(NodePhase.UPGRADED, node(a.progress(), "worker-a-1").phase(), "retried and upgraded");
    String failedRun = describe(childA2).getExecution().getRunId();
    estate.clearFaults("worker-a-2");
    run(blocks, "reset", Map.of("NODE_RUN", childA2, "NODE", "worker-a-2"));
    WorkersUpgradeResult resultA = WorkflowStub.fromTyped(a).getResult(180, TimeUnit.SECONDS, WorkersUpgradeResult.class);
    assertEquals(3, resultA.upgraded(), resultA.toString());
    assertEquals(0, resultA.failed(), resultA.toString());
    WorkflowExecutionInfo resetRun = describe(childA2);
    String resetRunId = resetRun.getExecution().getRunId();
    assertNotEquals(failedRun, resetRunId, "the reset made a new run");
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, resetRun.getStatus());
    NodeStatus a2 = node(a.progress(), "worker-a-2");
    assertEquals(NodePhase.UPGRADED, a2.phase());
    assertTrue(a2.message().startsWith("retried by a reset of " + childA2 + " (run " + resetRunId + ")"), a2.message());
    String shown = run(blocks, "node-run", Map.of("NODE_RUN", childA2));
    assertTrue(shown.contains("UPGRADED") && shown.contains(resetRunId), "describe, show and query of the reset run: " + shown);
    assertTrue(run(blocks, "run-progress", Map.of("RUN", runA)).contains("retried by a reset of"), transcript.toString());

    // Pool c's children, on their own: c-1 upgraded by its permit, c-0 rolled back after its verify failed.
    awaitTrue(Duration.ofSeconds(180), "worker-c-0's and worker-c-1's runs closed",
        () -> quiet(() -> describe(childC1).getStatus() != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING
            && describe(childId("worker-c-0")).getStatus() != WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING));
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, describe(childC1).getStatus());
    assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_FAILED, describe(childId("worker-c-0")).getStatus());

    groundTruth(from, to, childA2, failedRun, resetRunId, runC);
  }

  /** The nodes as the workload API server and the hosts' journals have them. */
  private void groundTruth(String from, String to, String childA2, String failedRun, String resetRunId, String runC) {
    EstateReport report = estate.report();
    Map<String, String> expected = Map.of(
        "cp-0", to, "worker-a-0", to, "worker-a-1", to, "worker-a-2", to,
        "worker-b-0", from, "worker-b-1", to, "worker-b-2", from,
        "worker-c-0", from, "worker-c-1", to, "worker-c-2", from);
    for (EstateReport.NodeReport node : report.nodes()) {
      assertEquals(expected.get(node.name()), node.kubeletVersion(), node.name());
      assertTrue(node.ready(), node.name() + " Ready");
      assertFalse(node.unschedulable(), node.name() + " left cordoned");
    }
    List<HostJournal> journals = report.nodes().stream().map(n -> HostJournal.parse(n.name(), n.journal())).toList();
    assertEquals(List.of(), JournalAudit.audit(journals), "no destructive step repeated without the observation that made it safe");

    HostJournal a2 = journals.stream().filter(j -> j.host().equals("worker-a-2")).findFirst().orElseThrow();
    Set<String> byFailed = scriptsOf(a2, childA2, failedRun);
    assertTrue(byFailed.contains("backup") && byFailed.contains("install") && byFailed.contains("restore"),
        "the failed run backed up, installed and, compensating, restored: " + byFailed);
    Set<String> byReset = scriptsOf(a2, childA2, resetRunId);
    assertTrue(byReset.contains("install") && byReset.contains("restart"), "the reset run installed and restarted: " + byReset);
    assertTrue(byReset.stream().noneMatch(s -> s.startsWith("stage") || s.equals("backup") || s.startsWith("inspect")),
        "the reset run kept preflight, stage and backup from the history: " + byReset);

    // The terminated parent's marks stay on the Machines it had marked (the page says to remove them).
    for (EstateReport.NodeReport node : report.nodes()) {
      Map<String, String> expectedMarks = Set.of("worker-c-0", "worker-c-1").contains(node.name())
          ? Map.of("cluster.x-k8s.io/skip-remediation", runC) : Map.of();
      assertEquals(expectedMarks, node.marks(), node.name());
    }
  }

  /** The scripts a run of a workflow began on the host, by template name. */
  private static Set<String> scriptsOf(HostJournal journal, String workflowId, String runId) {
    return journal.entries().stream()
        .filter(e -> e.event() == JournalEntry.Event.BEGIN && e.workflowId().equals(workflowId) && e.runId().equals(runId))
        .map(JournalEntry::script).collect(Collectors.toSet());
  }

  private WorkersUpgradeWorkflow startPool(String pool, ReleaseCatalogue.Release release, long readyTimeoutSeconds) {
    return UpgradeRuns.startWorkers(client, WorkflowIds.TASK_QUEUE, new WorkersUpgradeRequest(
        estate.cluster(), Estate.CLUSTER + "-workers-" + pool, template(release, readyTimeoutSeconds), "1",
        FailurePolicy.HALT, 0, 0, null, null));
  }

  private NodeUpgradeTemplate template(ReleaseCatalogue.Release release, long readyTimeoutSeconds) {
    return new NodeUpgradeTemplate(
        options.distribution(), options.to(), release.artifacts(), options.distribution().defaultProfile().withOs(options.os()),
        estate.ssh(), new DrainOptions(20, true, false, PdbBlockedAction.FAIL, false), readyTimeoutSeconds, 0,
        release.arch());
  }

  private String childId(String node) {
    return WorkflowIds.nodeUpgrade(Estate.NAMESPACE, Estate.CLUSTER + "-" + node, options.to());
  }

  // ---- the CLI --------------------------------------------------------------------------------

  private record Cli(int exit, String output) {}

  /** Runs a block of the page with bash, as an operator would paste it; fails unless it exits 0. */
  private String run(RunbookBlocks blocks, String name, Map<String, String> variables) throws Exception {
    Cli result = cli(blocks.block(name), variables);
    ran.add(name);
    assertEquals(0, result.exit(), "block " + name + " failed:\n" + result.output());
    return result.output();
  }

  private Cli cli(String block, Map<String, String> variables) throws Exception {
    ProcessBuilder builder = new ProcessBuilder("bash", "-euo", "pipefail", "-c", block).redirectErrorStream(true);
    Map<String, String> env = builder.environment();
    env.put("PATH", LocalStack.temporalCli().getParent() + ":" + env.getOrDefault("PATH", "/usr/bin:/bin"));
    env.put("TEMPORAL_ADDRESS", StackLayout.temporalAddress());
    env.put("TEMPORAL_NAMESPACE", "default");
    env.put("HOME", dir.toString()); // no profile of this machine's user
    env.putAll(variables);
    Process process = builder.start();
    byte[] bytes = process.getInputStream().readAllBytes();
    if (!process.waitFor(CLI_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
      process.destroyForcibly();
      throw new AssertionError("the block did not end in " + CLI_TIMEOUT + ":\n" + block);
    }
    String output = new String(bytes, StandardCharsets.UTF_8);
    transcript.append("$ ").append(variables).append('\n').append(block).append("\n-> exit ").append(process.exitValue())
        .append('\n').append(output).append('\n');
    return new Cli(process.exitValue(), output);
  }

  // ---- reading the runs -------------------------------------------------------------------------

  private WorkflowExecutionInfo describe(String workflowId) {
    return service.blockingStub().describeWorkflowExecution(DescribeWorkflowExecutionRequest.newBuilder()
        .setNamespace("default").setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId)).build())
        .getWorkflowExecutionInfo();
  }

  private String messageOf(String nodeRun) {
    try {
      String message = client.newWorkflowStub(NodeUpgradeWorkflow.class, nodeRun).progress().message();
      return message == null ? "" : message;
    } catch (RuntimeException notStartedYet) {
      return "";
    }
  }

  private boolean nodesAt(String version, String... nodes) {
    Set<String> names = Set.of(nodes);
    return estate.report().nodes().stream().filter(n -> names.contains(n.name())).allMatch(n -> n.kubeletVersion().equals(version));
  }

  private static NodeStatus node(UpgradeProgress progress, String name) {
    return progress.nodes().stream().filter(n -> n.node().equals(name)).findFirst()
        .orElseThrow(() -> new AssertionError(name + " not in " + progress));
  }

  private static int occurrences(String text, String part) {
    int n = 0;
    for (int at = text.indexOf(part); at >= 0; at = text.indexOf(part, at + 1)) {
      n++;
    }
    return n;
  }

  private static boolean quiet(Check check) {
    try {
      return check.holds();
    } catch (Exception | AssertionError e) {
      return false;
    }
  }

  private interface Check {
    boolean holds() throws Exception;
  }

  /** Waits until the run's progress matches; a query that fails meanwhile (a busy worker) is asked again. */
  private static UpgradeProgress awaitProgress(WorkersUpgradeWorkflow run, Duration timeout,
      Predicate<UpgradeProgress> condition) throws InterruptedException {
    UpgradeProgress[] last = new UpgradeProgress[1];
    awaitTrue(timeout, "progress never matched", () -> quiet(() -> {
      last[0] = run.progress();
      return condition.test(last[0]);
    }), () -> String.valueOf(last[0]));
    return last[0];
  }

  private static void awaitTrue(Duration timeout, String what, Supplier<Boolean> condition) throws InterruptedException {
    awaitTrue(timeout, what, condition, () -> "");
  }

  private static void awaitTrue(Duration timeout, String what, Supplier<Boolean> condition, Supplier<String> last)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (System.nanoTime() < deadline) {
      if (Boolean.TRUE.equals(condition.get())) {
        return;
      }
      Thread.sleep(300);
    }
    throw new AssertionError("not within " + timeout + ": " + what + "; last: " + last.get());
  }
}
