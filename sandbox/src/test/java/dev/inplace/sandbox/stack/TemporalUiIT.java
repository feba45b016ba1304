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
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.api.common.v1.WorkflowExecution;
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
import java.net.URLEncoder;
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
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What an operator sees in the Temporal Web UI of {@code ./inplace demo --topology processes
 * --temporal dev-server}, read by a real headless Chromium from the rendered page (its displayed
 * text, never its pixels):
 *
 * <ol>
 *   <li>while the demo runs, the ControlPlaneUpgrade run's <em>current details</em> name the node in
 *       flight (the demo's kubelets stay NotReady 12 s after a restart, so a node is in flight for
 *       long enough to be looked at);
 *   <li>after it, on the dev server started again on the database the demo left: the workflows list
 *       filtered by {@code InplaceCluster="fleet/edge-1"} (a URL query) lists every run of the cluster;
 *   <li>a NodeUpgrade run's timeline names each activity with its summary (stage, drain, restart,
 *       wait for Ready).
 * </ol>
 *
 * Each view is saved as a PNG: into {@code target/ui-screenshots}, or into the directory {@code
 * -Dinplace.ui.screenshots=DIR} names ({@code ./inplace ui-screenshots} remakes docs/ui/ so).
 */
class TemporalUiIT {
  private static final String UI_LINE = "Temporal UI: ";
  private static final String KEPT_LINE = "stack directory kept in ";
  private static final String VERSION = "v1.31.2+k3s1";
  private static final String CLUSTER = Estate.NAMESPACE + "/" + Estate.CLUSTER;
  private static final Pattern IN_FLIGHT = Pattern.compile("UPGRADING: \\d/3 upgraded, 0 failed, 0 skipped; in flight: (cp-\\d)");
  private static final Duration PAGE = Duration.ofSeconds(60);
  /** How long the parent may take to have a node in flight: the stack's start-up on two busy cores included. */
  private static final long LOOK_SECONDS = 420;
  private static final Duration RELOAD = Duration.ofSeconds(15);

  @TempDir Path dir;

  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(2)).build();
  private final Path screenshots = Path.of(System.getProperty("inplace.ui.screenshots", "target/ui-screenshots"));

  @Test
  void theUiShowsTheParentsNodeInFlightTheClustersRunsAndEachNodeActivitysSummary() throws Exception {
    Process demo = startDemo();
    DemoOutput output = new DemoOutput(demo);
    try (HeadlessChromium browser = HeadlessChromium.start(dir, 1440, 1000)) {
      String uiUrl = output.uiUrl.get(300, TimeUnit.SECONDS);
      assertNotNull(uiUrl, "the demo printed no UI line:\n" + output.text);
      String inFlight = currentDetailsWhileTheControlPlaneUpgrades(browser, uiUrl, output);

      assertTrue(demo.waitFor(600, TimeUnit.SECONDS), "the demo did not end:\n" + output.text);
      output.done.get(30, TimeUnit.SECONDS);
      assertEquals(0, demo.exitValue(), output.text.toString());
      JsonNode summary = new ObjectMapper().readTree(output.summaryLine);
      assertEquals(9, summary.get("upgraded").asInt(), output.summaryLine);
      Set<String> nodes = new TreeSet<>();
      summary.get("results").forEach(r -> nodes.add(r.get("node").asText()));
      assertTrue(nodes.contains(inFlight), inFlight + " is one of the demo's nodes " + nodes);

      assertNotNull(output.stackDir, output.text.toString());
      viewsOfTheFinishedRuns(browser, new StackLayout(output.stackDir).temporalDatabase());
    } finally {
      if (demo.isAlive()) {
        demo.destroy(); // SIGTERM: its shutdown hook stops the stack once it is up
        if (!demo.waitFor(30, TimeUnit.SECONDS)) {
          demo.destroyForcibly();
        }
      }
      stopWhatTheDemoLeft();
    }
  }

  /**
   * A demo stopped while its stack was still starting leaves what it had started; down stops exactly
   * those processes (their PID files and markers), and nothing when the demo stopped its stack itself.
   */
  private void stopWhatTheDemoLeft() throws Exception {
    try (var stacks = Files.list(dir.resolve("tmp"))) {
      for (Path stack : stacks.filter(p -> p.getFileName().toString().startsWith("inplace-demo-stack-")).toList()) {
        LocalStack.down(new StackLayout(stack));
      }
    }
  }

  /**
   * View 3, taken while the control plane upgrades: the ControlPlaneUpgrade run's User Metadata tab,
   * whose Current Details (the workflow's own {@code Workflow.setCurrentDetails}, fetched by the UI
   * through the run's metadata query, so answered by a live worker) name the node in flight. Returns
   * that node.
   */
  private String currentDetailsWhileTheControlPlaneUpgrades(HeadlessChromium browser, String uiUrl, DemoOutput output)
      throws Exception {
    WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget(StackLayout.temporalAddress()).build());
    try {
      WorkflowClient client =
          WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
      String running = RunSearchAttributes.CLUSTER.getName() + " = '" + CLUSTER + "' AND "
          + RunSearchAttributes.KIND.getName() + " = '" + RunSearchAttributes.KIND_CONTROL_PLANE + "'"
          + " AND ExecutionStatus = 'Running'";
      String lastText = "";
      RuntimeException lastListFailure = null;
      long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(LOOK_SECONDS);
      while (System.nanoTime() < deadline) {
        assertTrue(output.summaryLine == null, "the demo ended before a control-plane node was seen in flight:\n"
            + output.text + "\nlast page:\n" + lastText);
        WorkflowExecutionMetadata parent;
        try {
          parent = client.listExecutions(running).findFirst().orElse(null);
        } catch (RuntimeException notYet) {
          // The UI answers before the workers have registered inplace's search attributes.
          lastListFailure = notYet;
          Thread.sleep(500);
          continue;
        }
        if (parent == null
            || parent.getTypedSearchAttributes().get(RunSearchAttributes.NODE) == null) {
          Thread.sleep(500); // not started yet, or between nodes: InplaceNode names the nodes in flight
          continue;
        }
        browser.navigate(runUrl(uiUrl, parent.getExecution(), "user-metadata"));
        try {
          lastText = browser.awaitText(text -> text.contains("Current Details") && IN_FLIGHT.matcher(text).find(),
              Duration.ofSeconds(15), "the parent's current details naming a node in flight");
        } catch (AssertionError notYet) {
          lastText = notYet.getMessage(); // the node ended between the list and the page: look again
          continue;
        }
        assertTrue(lastText.contains("Running"), lastText);
        assertTrue(lastText.contains(parent.getExecution().getWorkflowId()), lastText);
        assertTrue(lastText.contains("Upgrade the control plane of " + CLUSTER + " to " + VERSION),
            "the run's static summary: " + lastText);
        browser.screenshot(screenshots.resolve("parent-current-details.png"));
        Matcher node = IN_FLIGHT.matcher(lastText);
        assertTrue(node.find());
        return node.group(1);
      }
      throw new AssertionError("no control-plane node was seen in flight in the UI in " + LOOK_SECONDS
          + " s; last List failure: " + lastListFailure + "\nlast page:\n" + lastText + "\nthe demo's output:\n" + output.text);
    } finally {
      service.shutdownNow();
    }
  }

  /** Views 1 and 2, on the dev server started again (with its UI, on free ports) on the demo's database. */
  private void viewsOfTheFinishedRuns(HeadlessChromium browser, Path database) throws Exception {
    assertTrue(Files.isRegularFile(database), "the dev server's database in the stack directory: " + database);
    int port = freePort();
    int uiPort = freePort();
    Process server = new ProcessBuilder(LocalStack.temporalCli().toString(), "server", "start-dev",
        "--ip", "127.0.0.1", "--port", Integer.toString(port), "--ui-port", Integer.toString(uiPort),
        "--db-filename", database.toString(), "--log-level", "warn")
        .redirectErrorStream(true).redirectOutput(dir.resolve("dev-server-again.log").toFile()).start();
    WorkflowServiceStubs service = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setTarget("127.0.0.1:" + port).build());
    try {
      String ui = "http://127.0.0.1:" + uiPort;
      awaitHttp200(ui, server);
      WorkflowClient client =
          WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace("default").build());
      String byCluster = RunSearchAttributes.CLUSTER.getName() + " = '" + CLUSTER + "'";
      List<WorkflowExecutionMetadata> runs = client.listExecutions(byCluster).toList();
      assertEquals(12, runs.size(), "9 node runs, the control plane's and 2 MachineDeployments' runs");

      // View 1: the workflows list, filtered by the cluster's search attribute in the URL.
      Set<String> ids = runs.stream().map(r -> r.getExecution().getWorkflowId()).collect(Collectors.toCollection(TreeSet::new));
      String list = flat(browser.open(ui + "/namespaces/default/workflows?query="
          + URLEncoder.encode(RunSearchAttributes.CLUSTER.getName() + "=\"" + CLUSTER + "\"", StandardCharsets.UTF_8),
          text -> ids.stream().allMatch(text::contains), RELOAD, PAGE, "every run of " + CLUSTER));
      assertTrue(list.contains("12 Workflows"), list);
      assertTrue(list.contains("12 Completed"), list);
      assertTrue(list.contains("InplaceCluster = \"" + CLUSTER + "\""), "the filter the list applies: " + list);
      for (String type : List.of("ControlPlaneUpgradeWorkflow", "WorkersUpgradeWorkflow", "NodeUpgradeWorkflow")) {
        assertTrue(list.contains(type), type + " in " + list);
      }
      browser.screenshot(screenshots.resolve("runs-of-cluster.png"));

      String none = flat(browser.open(ui + "/namespaces/default/workflows?query="
          + URLEncoder.encode(RunSearchAttributes.CLUSTER.getName() + "=\"fleet/no-such-cluster\"", StandardCharsets.UTF_8),
          text -> text.contains("No Results"), RELOAD, PAGE, "the list for another cluster"));
      assertTrue(none.contains("0 Workflows"), none);
      assertTrue(ids.stream().noneMatch(none::contains), "another cluster's list shows none of edge-1's runs: " + none);

      // View 2: a worker's NodeUpgrade run, its timeline labelled with the activities' summaries.
      String node = "worker-a-1";
      String nodeRunId = WorkflowIds.nodeUpgrade(Estate.NAMESPACE, Estate.CLUSTER + "-" + node, VERSION);
      WorkflowExecutionMetadata nodeRun = runs.stream()
          .filter(r -> r.getExecution().getWorkflowId().equals(nodeRunId)).findFirst()
          .orElseThrow(() -> new AssertionError(nodeRunId + " among " + ids));
      List<String> summaries = List.of(
          "StageArtifacts • stage k3s 4 MiB, k3s-airgap-images 4 MiB -> " + node,
          "DrainNode • drain " + node + " (up to 20 s)",
          "RestartService • restart k3s-agent on " + node,
          "AwaitNodeVersion • wait for " + node + " Ready at " + VERSION);
      String history = browser.open(runUrl(ui, nodeRun.getExecution(), "history"),
          text -> summaries.stream().allMatch(text::contains), RELOAD, PAGE, "the activities' summaries " + summaries);
      assertTrue(history.contains("Completed"), history);
      assertTrue(flat(history).contains("Activity Type RecordMachineUpgrade Summary record " + VERSION
          + " on Machine " + Estate.CLUSTER + "-" + node), "the event list's Summary of the last activity: " + history);
      // The timeline scrolls on its own: its rows from the wait for Ready down to the staging in view,
      // its heading at the top of the page, below the UI's sticky bar.
      assertTrue(browser.scrollTo("AwaitNodeVersion • ", 6), "the timeline's AwaitNodeVersion row");
      assertTrue(browser.scrollTo("Event History", 64), "the Event History heading");
      browser.screenshot(screenshots.resolve("node-run-activity-summaries.png"));
    } finally {
      service.shutdownNow();
      server.destroy();
      if (!server.waitFor(20, TimeUnit.SECONDS)) {
        server.destroyForcibly();
      }
    }
  }

  private Process startDemo() throws Exception {
    Path tmp = Files.createDirectories(dir.resolve("tmp"));
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(SandboxSlot.jvmArguments());
    command.add("-Djava.io.tmpdir=" + tmp); // the demo's stack directory, kept (--keep) for views 1 and 2
    command.add("-XX:+UseSerialGC");
    command.add("-cp");
    command.add(String.join(File.pathSeparator, StackCommands.classpath()));
    command.add(SandboxMain.class.getName());
    // Binaries of 4 MiB (the timeline's summaries name the sizes); kubelets NotReady 12 s after each
    // restart, with room for it within the Ready timeout: each node is in flight for ~20 s.
    command.addAll(List.of("demo", "--topology", "processes", "--temporal", "dev-server", "--json", "--keep",
        "--binary-size-mib", "4", "--restart-seconds", "12", "--ready-timeout", "60"));
    return new ProcessBuilder(command).redirectErrorStream(true).start();
  }

  /** The demo's output, read as it comes: the UI's URL, the kept stack directory, the JSON summary. */
  private static final class DemoOutput {
    final StringBuffer text = new StringBuffer();
    final CompletableFuture<String> uiUrl = new CompletableFuture<>();
    final CompletableFuture<Void> done = new CompletableFuture<>();
    volatile Path stackDir;
    volatile String summaryLine;

    DemoOutput(Process demo) {
      Thread reader = new Thread(() -> {
        try (BufferedReader lines =
            new BufferedReader(new InputStreamReader(demo.getInputStream(), StandardCharsets.UTF_8))) {
          for (String line = lines.readLine(); line != null; line = lines.readLine()) {
            text.append(line).append('\n');
            if (line.startsWith(UI_LINE)) {
              uiUrl.complete(line.substring(UI_LINE.length()).trim());
            } else if (line.startsWith(KEPT_LINE)) {
              stackDir = Path.of(line.substring(KEPT_LINE.length()).trim());
            } else if (line.startsWith("{")) {
              summaryLine = line;
            }
          }
        } catch (Exception e) {
          text.append("(reading the demo's output failed: ").append(e).append(")\n");
        } finally {
          uiUrl.complete(null);
          done.complete(null);
        }
      }, "demo-output");
      reader.setDaemon(true);
      reader.start();
    }
  }

  /** The text with each run of white space (line breaks, tabs between table cells) as one space. */
  private static String flat(String text) {
    return text.replaceAll("\\s+", " ");
  }

  /** A run's page in the UI; the workflow ID is one path segment (its slashes encoded, as the UI links it). */
  private static String runUrl(String ui, WorkflowExecution run, String tab) {
    return ui + "/namespaces/default/workflows/"
        + URLEncoder.encode(run.getWorkflowId(), StandardCharsets.UTF_8).replace("+", "%20")
        + "/" + run.getRunId() + "/" + tab;
  }

  private void awaitHttp200(String url, Process server) throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
    while (System.nanoTime() < deadline) {
      assertTrue(server.isAlive(), "the dev server exited: " + Files.readString(dir.resolve("dev-server-again.log")));
      try {
        if (http.send(HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(5)).build(),
            HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return;
        }
      } catch (Exception notYet) {
        // starting
      }
      Thread.sleep(500);
    }
    throw new AssertionError(url + " did not answer 200 in 90 s");
  }

  private static int freePort() throws Exception {
    try (ServerSocket socket = new ServerSocket()) {
      socket.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      return socket.getLocalPort();
    }
  }
}
