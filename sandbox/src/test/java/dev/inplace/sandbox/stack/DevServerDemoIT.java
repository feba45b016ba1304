package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.sandbox.SandboxMain;
import dev.inplace.sandbox.SandboxSlot;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.workflows.api.RunSearchAttributes;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.api.workflowservice.v1.ListWorkflowExecutionsRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.client.WorkflowExecutionMetadata;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code ./inplace demo --topology processes --temporal dev-server --json} as its own process: the
 * local stack on the real Temporal server (the test bed's {@code temporal server start-dev}). Every
 * node is upgraded, the summary names the server's version and its Web UI (which this test fetches
 * while the demo runs), and the runs are found by their search attributes through List visibility,
 * which the Java test server does not have: on the server started again on the database the demo's
 * stack left in its directory.
 */
class DevServerDemoIT {
  private static final String UI_LINE = "Temporal UI: ";
  private static final String KEPT_LINE = "stack directory kept in ";

  @TempDir Path dir;

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();

  @Test
  void theDemoOnTheRealTemporalServerUpgradesEveryNodeServesItsUiAndItsRunsAreListedByCluster() throws Exception {
    Path temporal = LocalStack.temporalCli();
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(SandboxSlot.jvmArguments());
    command.add("-Djava.io.tmpdir=" + tmp); // the demo's stack directory, kept (--keep) for the second half
    command.add("-XX:+UseSerialGC");
    command.add("-cp");
    command.add(String.join(File.pathSeparator, StackCommands.classpath()));
    command.add(SandboxMain.class.getName());
    command.addAll(List.of("demo", "--topology", "processes", "--temporal", "dev-server", "--json", "--keep",
        "--binary-size-mib", "8"));
    Process demo = new ProcessBuilder(command).redirectErrorStream(true).start();

    StringBuilder output = new StringBuilder();
    String uiUrl = null;
    int uiStatus = -1;
    Path stackDir = null;
    String summaryLine = null;
    try (BufferedReader lines =
        new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
      for (String line = lines.readLine(); line != null; line = lines.readLine()) {
        output.append(line).append('\n');
        if (line.startsWith(UI_LINE) && uiUrl == null) {
          uiUrl = line.substring(UI_LINE.length()).trim();
          uiStatus = status(uiUrl); // while the stack is up: the demo stops it before it exits
        } else if (line.startsWith(KEPT_LINE)) {
          stackDir = Path.of(line.substring(KEPT_LINE.length()).trim());
        } else if (line.startsWith("{")) {
          summaryLine = line;
        }
      }
    } finally {
      if (!demo.waitFor(60, TimeUnit.SECONDS)) {
        demo.destroy(); // SIGTERM: its shutdown hook stops the stack
        demo.waitFor(30, TimeUnit.SECONDS);
      }
    }
    assertEquals(0, demo.exitValue(), output.toString());

    assertNotNull(uiUrl, "the demo prints the UI's URL:\n" + output);
    assertEquals(200, uiStatus, uiUrl + " while the demo ran");
    assertNotNull(summaryLine, output.toString());
    JsonNode summary = new ObjectMapper().readTree(summaryLine);
    assertEquals(9, summary.get("nodes").asInt(), summaryLine);
    assertEquals(9, summary.get("upgraded").asInt(), summaryLine);
    assertTrue(summary.path("temporal").asText().matches("\\d+\\.\\d+\\.\\d+.*"),
        "the server's version from GetSystemInfo: " + summaryLine);
    assertEquals(uiUrl, summary.path("uiUrl").asText(), "the summary's UI, which answered 200: " + summaryLine);
    assertTrue(summary.path("processes").path("temporal").asLong() > 0, summaryLine);
    Set<String> nodes = new TreeSet<>();
    summary.get("results").forEach(r -> nodes.add(r.get("node").asText()));
    assertEquals(9, nodes.size(), summaryLine);

    assertNotNull(stackDir, output.toString());
    Path database = new StackLayout(stackDir).temporalDatabase();
    assertTrue(Files.isRegularFile(database), "the dev server's database in the stack directory: " + database);
    listedRunsOnTheSameDatabase(temporal, database, nodes, summary.get("version").asText());
  }

  /**
   * Starts the dev server again on the demo's database (another port, no UI) and finds the demo's runs
   * with List queries on inplace's search attributes.
   */
  private void listedRunsOnTheSameDatabase(Path temporal, Path database, Set<String> nodes, String version)
      throws Exception {
    int port = freePort();
    Process server = new ProcessBuilder(temporal.toString(), "server", "start-dev", "--ip", "127.0.0.1",
        "--port", Integer.toString(port), "--headless", "--db-filename", database.toString(),
        "--log-level", "warn")
        .redirectErrorStream(true).redirectOutput(dir.resolve("dev-server-again.log").toFile()).start();
    WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:" + port).build());
    try {
      WorkflowClient client =
          WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
      String cluster = Estate.NAMESPACE + "/" + Estate.CLUSTER;
      String nodeRuns = RunSearchAttributes.CLUSTER.getName() + " = '" + cluster + "' AND "
          + RunSearchAttributes.KIND.getName() + " = '" + RunSearchAttributes.KIND_NODE + "'";
      List<WorkflowExecutionMetadata> found = List.of();
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
      while (System.nanoTime() < deadline) {
        try {
          found = client.listExecutions(nodeRuns).toList();
          if (found.size() >= nodes.size()) {
            break;
          }
        } catch (RuntimeException notYetServing) {
          assertTrue(server.isAlive(), "the dev server exited; " + Files.readString(dir.resolve("dev-server-again.log")));
        }
        Thread.sleep(500);
      }
      assertEquals(nodes, found.stream()
          .flatMap(run -> run.getTypedSearchAttributes().get(RunSearchAttributes.NODE).stream())
          .collect(Collectors.toCollection(TreeSet::new)), "the node runs found by " + nodeRuns);
      for (WorkflowExecutionMetadata run : found) {
        assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, run.getStatus(), run.getExecution().getWorkflowId());
        assertEquals(version, run.getTypedSearchAttributes().get(RunSearchAttributes.TARGET_VERSION));
      }

      // The raw ListWorkflowExecutions call: every run of the cluster, and none for a cluster that is not there.
      List<WorkflowExecutionInfo> all = list(service, RunSearchAttributes.CLUSTER.getName() + " = '" + cluster + "'");
      Set<String> kinds = all.stream().map(info -> info.getType().getName()).collect(Collectors.toSet());
      assertTrue(all.size() > nodes.size(), "the control plane's and the MachineDeployments' runs too: " + kinds);
      assertTrue(kinds.containsAll(Set.of("ControlPlaneUpgradeWorkflow", "WorkersUpgradeWorkflow", "NodeUpgradeWorkflow")),
          kinds.toString());
      assertEquals(List.of(), list(service, RunSearchAttributes.CLUSTER.getName() + " = 'fleet/no-such-cluster'"));
    } finally {
      service.shutdownNow();
      server.destroy();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    }
  }

  private static List<WorkflowExecutionInfo> list(WorkflowServiceStubs service, String query) {
    return service.blockingStub().listWorkflowExecutions(
        ListWorkflowExecutionsRequest.newBuilder().setNamespace("default").setQuery(query).setPageSize(1000).build())
        .getExecutionsList();
  }

  private int status(String url) {
    try {
      return http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
          HttpResponse.BodyHandlers.discarding()).statusCode();
    } catch (Exception e) {
      return -1;
    }
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    }
  }
}
