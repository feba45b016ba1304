package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import io.temporal.workflow.Workflow;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

class InplaceCliTest {
  static final List<Object> requests = new CopyOnWriteArrayList<>();

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow =
      TestWorkflowExtension.newBuilder()
          .registerWorkflowImplementationTypes(RecordingWorkers.class, RecordingControlPlane.class, WaitingNode.class)
          .registerSearchAttribute("InplaceCluster", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceKind", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceTargetVersion", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .setDoNotStart(true)
          .build();

  @TempDir Path dir;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  /** The operator controls of the stand-in runs: a pause flag, an abort, skipped nodes. */
  public abstract static class RecordingControls implements dev.inplace.workflows.api.UpgradeControls {
    protected boolean paused;
    protected boolean aborted;
    private final List<String> skipped = new ArrayList<>();

    @Override public String pause() { paused = true; return "paused"; }
    @Override public void validatePause() { if (paused) { throw new IllegalStateException("already paused"); } }
    @Override public String resume() { paused = false; return "resumed"; }
    @Override public void validateResume() {}
    @Override public String abort() { aborted = true; return "aborting"; }
    @Override public void validateAbort() {}
    @Override public String setMaxUnavailable(String v) { return "window " + v; }
    @Override public void validateSetMaxUnavailable(String v) {}
    @Override public String retryNode(String node) { return "retrying " + node; }
    @Override public void validateRetryNode(String node) {}
    @Override public String skipNode(String node) { skipped.add(node); return "skipped " + node; }
    @Override public void validateSkipNode(String node) {}
    /** The CLI never sends it: children do. */
    public void nodeStaged(String node) {}

    @Override
    public UpgradeProgress progress() {
      return new UpgradeProgress("WorkersUpgrade", new ClusterRef("fleet", "edge-1"), "v1.31.2+k3s1",
          paused ? RunPhase.PAUSED : RunPhase.UPGRADING, "", paused, "1", 1, 2, 1, 0, skipped.size(), 1, null,
          List.of(new NodeStatus("m-0", "worker-0", NodeRole.WORKER, NodePhase.UPGRADED, null, 0, 0, "", "done", ""),
              new NodeStatus("m-1", "worker-1", NodeRole.WORKER, NodePhase.UPGRADING, null, 0, 0, "", "", "")));
    }
  }

  /** A stand-in WorkersUpgrade: records its request and ends when aborted. */
  public static class RecordingWorkers extends RecordingControls implements WorkersUpgradeWorkflow {
    @Override
    public WorkersUpgradeResult upgrade(WorkersUpgradeRequest request) {
      requests.add(request);
      Workflow.await(() -> aborted);
      return new WorkersUpgradeResult(request.cluster(), request.machineDeployment(), "v1.31.2+k3s1", 0, 0, 0, true, 1, List.of());
    }

    /** The CLI never sends it: children do. */
    @Override
    public void nodeEnded(dev.inplace.workflows.api.NodeEnd end) {}
  }

  /** A stand-in ControlPlaneUpgrade that records its request and returns. */
  public static class RecordingControlPlane extends RecordingControls implements ControlPlaneUpgradeWorkflow {
    @Override
    public ControlPlaneUpgradeResult upgrade(ControlPlaneUpgradeRequest request) {
      requests.add(request);
      return new ControlPlaneUpgradeResult(request.cluster(), request.template().targetVersion(), "", 0, 0, 0, false, List.of());
    }
  }

  /** A stand-in NodeUpgrade that waits at its drain until terminated. */
  public static class WaitingNode implements dev.inplace.workflows.api.NodeUpgradeWorkflow {
    @Override
    public dev.inplace.workflows.api.NodeUpgradeResult upgrade(
        dev.inplace.workflows.api.NodeUpgradeRequest request) {
      Workflow.await(() -> false);
      return null;
    }

    @Override
    public dev.inplace.workflows.api.NodeProgress progress() {
      return new dev.inplace.workflows.api.NodeProgress("edge-1-md-0-x", "worker-x",
          dev.inplace.workflows.api.NodePhase.UPGRADING, dev.inplace.workflows.api.UpgradeStep.DRAIN, List.of(),
          "draining worker-x");
    }

    @Override
    public void permit() {}
  }

  @Test
  void statusShowsANodeRunTheCapiHookStarted(TestWorkflowEnvironment env, Worker worker) {
    env.start();
    String id = WorkflowIds.nodeUpgradeForHook("fleet", "edge-1-md-0-x", "0123456789abcdef");
    var stub = env.getWorkflowClient().newWorkflowStub(dev.inplace.workflows.api.NodeUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(worker.getTaskQueue()).build());
    WorkflowClient.start(stub::upgrade, (dev.inplace.workflows.api.NodeUpgradeRequest) null);

    assertEquals(0, cli(env, worker, "status", id), err.toString());
    assertTrue(out.toString().contains("worker-x (edge-1-md-0-x): UPGRADING at drain"), out.toString());
    env.getWorkflowClient().newUntypedWorkflowStub(id).terminate("test over");
  }

  private int cli(TestWorkflowEnvironment env, Worker worker, String... args) {
    CliContext context = CliContext.of(env.getWorkflowClient(), worker.getTaskQueue(),
        new PrintStream(out, true, StandardCharsets.UTF_8), 20);
    return InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }

  /** The request a stand-in run recorded once its first workflow task ran. */
  private static <T> T recorded(Class<T> type, java.util.function.Predicate<T> which) throws InterruptedException {
    long deadline = System.nanoTime() + java.util.concurrent.TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      var found = requests.stream().filter(type::isInstance).map(type::cast).filter(which).findFirst();
      if (found.isPresent()) {
        return found.get();
      }
      Thread.sleep(20);
    }
    throw new AssertionError("no " + type.getSimpleName() + " recorded");
  }

  private String workersRun(TestWorkflowEnvironment env, Worker worker) {
    env.start();
    String id = WorkflowIds.workersUpgrade("fleet", "edge-1", "edge-1-workers", "v1.31.2+k3s1");
    WorkersUpgradeWorkflow run = env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(id).setTaskQueue(worker.getTaskQueue()).build());
    WorkflowClient.start(run::upgrade, new WorkersUpgradeWorkflow.WorkersUpgradeRequest(
        new ClusterRef("fleet", "edge-1"), "edge-1-workers", null, "1", null, 0, 0, null, null));
    return id;
  }

  @Test
  void pauseShowsInStatusAndAbortEndsTheRun(TestWorkflowEnvironment env, Worker worker) {
    String id = workersRun(env, worker);

    assertEquals(0, cli(env, worker, "pause", id), err.toString());
    assertEquals(0, cli(env, worker, "status", id), err.toString());
    assertEquals(0, cli(env, worker, "skip", id, "worker-1"), err.toString());
    assertEquals(0, cli(env, worker, "abort", id), err.toString());
    assertEquals(0, cli(env, worker, "watch", id), err.toString());

    String printed = out.toString(StandardCharsets.UTF_8);
    assertTrue(printed.contains("paused"), printed);
    assertTrue(printed.contains("PAUSED (paused)"), printed);
    assertTrue(printed.contains("worker-1"), printed);
    assertTrue(printed.contains("skipped worker-1"), printed);
  }

  @Test
  void aRefusedUpdateExitsOneWithTheValidatorsReason(TestWorkflowEnvironment env, Worker worker) {
    String id = workersRun(env, worker);
    cli(env, worker, "pause", id);

    assertEquals(1, cli(env, worker, "pause", id));
    assertTrue(err.toString().contains("already paused"), err.toString());
    cli(env, worker, "abort", id);
  }

  @Test
  void upgradeControlPlaneStartsARunWithTheCatalogueArtifacts(TestWorkflowEnvironment env, Worker worker) throws Exception {
    env.start();
    Path catalogue = Files.writeString(dir.resolve("releases.json"), """
        {"releases":[{"version":"v1.31.2+k3s1","distribution":"K3S","arch":"amd64","artifacts":[
          {"name":"k3s","kind":"BINARY","source":"/srv/k3s","sha256":"%s","sizeBytes":10,
           "installPath":"/usr/local/bin/k3s","mode":"0755"}]}]}""".formatted("ab".repeat(32)));

    int code = cli(env, worker, "upgrade", "controlplane", "--cluster", "fleet/edge-1", "--version", "v1.31.2+k3s1",
        "--catalogue", catalogue.toString(), "--ssh-user", "inplace", "--ssh-key-secret", "edge-1-ssh-key",
        "--known-hosts-secret", "edge-1-known-hosts");

    assertEquals(0, code, err.toString());
    String id = WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", "v1.31.2+k3s1");
    env.getWorkflowClient().newUntypedWorkflowStub(id).getResult(ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeResult.class);
    var request = (ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest) requests.stream()
        .filter(r -> r instanceof ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest).reduce((a, b) -> b).orElseThrow();
    assertEquals("ab".repeat(32), request.template().artifacts().get(0).sha256());
    assertEquals("edge-1-ssh-key", request.template().ssh().privateKeySecret());
    assertTrue(out.toString().contains("started " + id), out.toString());
  }

  @Test
  void kubeadmUpgradeUsesTheKubeadmHostLayoutAndTheWindowSoakAndDrainOptions(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    env.start();
    Path catalogue = Files.writeString(dir.resolve("releases.json"), """
        {"releases":[{"version":"v1.31.2","distribution":"KUBEADM","arch":"amd64","artifacts":[
          {"name":"kubeadm","kind":"BINARY","source":"/srv/kubeadm","sha256":"%s","sizeBytes":10,
           "installPath":"/usr/bin/kubeadm","mode":"0755"}]}]}""".formatted("cd".repeat(32)));

    int code = cli(env, worker, "upgrade", "workers", "--cluster=fleet/edge-2", "--machine-deployment", "edge-2-md",
        "--version=v1.31.2", "--distribution=kubeadm", "--catalogue=" + catalogue, "--ssh-user", "inplace",
        "--ssh-key-secret=k", "--known-hosts-secret", "h", "--soak=5m", "--skip-drain", "--drain-timeout", "2m",
        "--window-start=22:00", "--window-end", "04:00", "--window-days=MON,TUE", "--window-time-zone=Europe/Berlin",
        "--max-unavailable=25%");

    assertEquals(0, code, err.toString());
    String id = WorkflowIds.workersUpgrade("fleet", "edge-2", "edge-2-md", "v1.31.2");
    var request = recorded(WorkersUpgradeWorkflow.WorkersUpgradeRequest.class,
        r -> r.cluster().name().equals("edge-2"));
    assertEquals(HostProfile.kubeadmDefaults(), request.template().profile());
    assertEquals(Distribution.KUBEADM, request.template().distribution());
    assertEquals(300, request.soakSeconds());
    assertEquals(120, request.template().drain().timeoutSeconds());
    assertTrue(request.template().drain().skip());
    assertEquals("25%", request.maxUnavailable());
    assertEquals(new MaintenanceWindow(List.of("MON", "TUE"), "22:00", "04:00", "Europe/Berlin"), request.window());
    assertTrue(out.toString().contains("started " + id), out.toString());
    cli(env, worker, "abort", id);
  }

  private Path k3sCatalogue() throws Exception {
    return Files.writeString(dir.resolve("releases.json"), """
        {"releases":[{"version":"v1.31.2+k3s1","distribution":"K3S","arch":"amd64","artifacts":[
          {"name":"k3s","kind":"BINARY","source":"/srv/k3s","sha256":"%s","sizeBytes":10,
           "installPath":"/usr/local/bin/k3s","mode":"0755"}]}]}""".formatted("ab".repeat(32)));
  }

  /** {@code upgrade workers} of pool md in cluster fleet/NAME with the k3s catalogue, then {@code extra}. */
  private String[] workersUpgrade(String cluster, String... extra) throws Exception {
    List<String> args = new ArrayList<>(List.of("upgrade", "workers", "--cluster=fleet/" + cluster,
        "--machine-deployment=md", "--version=v1.31.2+k3s1", "--catalogue=" + k3sCatalogue(), "--ssh-user=u",
        "--ssh-key-secret=k", "--known-hosts-secret=h"));
    args.addAll(List.of(extra));
    return args.toArray(String[]::new);
  }

  @Test
  void aWindowReadyTimeoutOrJumpHostTheRunWouldRefuseIsAUsageErrorAndStartsNothing(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    env.start();
    Map<String, String> refusals = new java.util.LinkedHashMap<>();
    for (String window : List.of("0", "150%", "two")) {
      refusals.put("--max-unavailable=" + window, "--max-unavailable must be a count of at least 1");
    }
    refusals.put("--ready-timeout=0", "--ready-timeout must be at least 1 second, got 0");
    refusals.put("--jump-host=bastion:99999", "--jump-host must be host[:port] with a port from 1 to 65535");
    refusals.put("--max-failures=3", "--max-failures applies only with --on-failure continue");
    for (var refusal : refusals.entrySet()) {
      err.reset();
      assertEquals(2, cli(env, worker, workersUpgrade("edge-3", refusal.getKey())), refusal.getKey());
      assertTrue(err.toString().contains(refusal.getValue()), err.toString());
    }
    assertEquals(0, env.getWorkflowClient().getWorkflowServiceStubs().blockingStub().listOpenWorkflowExecutions(
        io.temporal.api.workflowservice.v1.ListOpenWorkflowExecutionsRequest.newBuilder()
            .setNamespace(env.getNamespace()).build()).getExecutionsCount(), "nothing was started");
  }

  @Test
  void aSecondStartSaysItAttachedAndThatItsOptionsWereNotApplied(TestWorkflowEnvironment env, Worker worker)
      throws Exception {
    env.start();
    String[] args = workersUpgrade("edge-4", "--max-unavailable=2");
    String id = WorkflowIds.workersUpgrade("fleet", "edge-4", "md", "v1.31.2+k3s1");
    assertEquals(0, cli(env, worker, args), err.toString());
    assertTrue(out.toString().contains("started " + id), out.toString());
    out.reset();
    args[args.length - 1] = "--max-unavailable=3";
    assertEquals(0, cli(env, worker, args), err.toString());
    assertTrue(out.toString().contains("attached to " + id + ": that run is running or has completed"), out.toString());
    assertFalse(out.toString().contains("started " + id), out.toString());
    cli(env, worker, "abort", id);
  }

  @Test
  void aWindowWithOneEndNamesTheMissingFlag(TestWorkflowEnvironment env, Worker worker) throws Exception {
    env.start();
    Path catalogue = Files.writeString(dir.resolve("releases.json"), "{\"releases\":[]}");
    int code = cli(env, worker, "upgrade", "controlplane", "--cluster=fleet/edge-1", "--version=v1", "--catalogue=" + catalogue,
        "--ssh-user=u", "--ssh-key-secret=k", "--known-hosts-secret=h", "--window-start=22:00");
    assertEquals(2, code);
    assertTrue(err.toString().contains("--catalogue") || err.toString().contains("--window-end"), err.toString());
  }

  @Test
  void statusPrintsTheSameProgressAsJsonAndYaml(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String id = workersRun(env, worker);

    assertEquals(0, cli(env, worker, "status", id, "-o", "json"), err.toString());
    JsonNode json = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));
    assertEquals("UPGRADING", json.get("phase").asText());
    assertEquals("worker-1", json.get("nodes").get(1).get("node").asText());

    out.reset();
    assertEquals(0, cli(env, worker, "status", "--output=yaml", id), err.toString());
    assertTrue(out.toString().contains("phase: \"UPGRADING\"") || out.toString().contains("phase: UPGRADING"), out.toString());

    assertEquals(2, cli(env, worker, "status", id, "-o", "xml"));
    assertTrue(err.toString().contains("'--output'") && err.toString().contains("xml"), err.toString());
    cli(env, worker, "abort", id);
  }

  @Test
  void pausingARunThatHasEndedOrDoesNotExistSaysSoAndExitsOne(TestWorkflowEnvironment env, Worker worker) {
    String id = workersRun(env, worker);
    cli(env, worker, "abort", id);
    env.getWorkflowClient().newUntypedWorkflowStub(id).getResult(Object.class);

    assertEquals(1, cli(env, worker, "pause", id));
    assertTrue(err.toString().contains("run " + id + " has ended (COMPLETED): nothing to pause"), err.toString());

    String unknown = WorkflowIds.workersUpgrade("fleet", "edge-9", "edge-9-workers", "v1.31.2+k3s1");
    assertEquals(1, cli(env, worker, "resume", unknown));
    assertTrue(err.toString().contains("no run " + unknown + " on this Temporal namespace"), err.toString());
    assertFalse(err.toString().contains("NOT_FOUND"), err.toString());
  }

  @Test
  void watchExitsOneWhenTheRunDidNotComplete(TestWorkflowEnvironment env, Worker worker) {
    String id = workersRun(env, worker);
    env.getWorkflowClient().newUntypedWorkflowStub(id).terminate("test");

    assertEquals(1, cli(env, worker, "watch", id, "-o", "json"));
    assertTrue(err.toString().contains("ended TERMINATED"), err.toString());
  }

  @Test
  void anUnknownFlagIsNamedWithOnlyThatCommandsUsage(TestWorkflowEnvironment env, Worker worker) {
    env.start();
    assertEquals(2, cli(env, worker, "upgrade", "workers", "--max-unavailabel", "2"));
    String printed = err.toString();
    assertTrue(printed.contains("'--max-unavailabel'"), printed);
    assertTrue(printed.contains("Usage: inplace upgrade workers"), printed);
    assertFalse(printed.contains("Usage: inplace upgrade controlplane"), printed);
    assertFalse(printed.contains("Commands:"), printed);
  }

  @Test
  void usageErrorsExitTwoAndSendNothing(TestWorkflowEnvironment env, Worker worker) {
    env.start();
    assertEquals(2, cli(env, worker, "frobnicate"));
    assertEquals(2, cli(env, worker, "pause"));
    assertEquals(2, cli(env, worker, "pause", "node-upgrade/fleet/m/v1"));
    assertEquals(2, cli(env, worker, "upgrade", "workers", "--cluster", "edge-1", "--version", "v1.31.2"));
    assertEquals(2, cli(env, worker, "upgrade", "controlplane", "--bogus", "x"));
    assertTrue(err.toString().contains("'--cluster': needs NAMESPACE/NAME"), err.toString());
    assertTrue(err.toString().contains("inplace upgrade controlplane: Unknown option") && err.toString().contains("'--bogus'"), err.toString());
  }

  @Test
  void withoutATemporalAddressItSaysWhatToSet() {
    ByteArrayOutputStream e = new ByteArrayOutputStream();
    int code = InplaceCli.run(new String[] {"status", "x"}, Map.of(), new PrintStream(out), new PrintStream(e, true, StandardCharsets.UTF_8));
    assertEquals(2, code);
    assertNotNull(e.toString());
    assertTrue(e.toString().contains("TEMPORAL_ADDRESS"), e.toString());
  }
}
