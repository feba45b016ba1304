package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.google.protobuf.Timestamp;
import dev.inplace.workflows.api.RunSearchAttributes;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import io.temporal.api.common.v1.Memo;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.common.v1.WorkflowType;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflow.v1.WorkflowExecutionInfo;
import io.temporal.client.WorkflowExecutionMetadata;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.internal.common.SearchAttributesUtil;
import io.temporal.testing.TestWorkflowEnvironment;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.time.Instant;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code history NS/NAME} against a fabric8 mock API server in CRUD mode holding the CRs, and
 * Temporal's in-process test server, which has no List (visibility): the CRs' rows are shown and the
 * missing List is said.
 */
class HistoryCommandTest {
  private final KubernetesMockServer server =
      new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
  private KubernetesClient management;
  private TestWorkflowEnvironment temporal;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  @BeforeEach
  void start() {
    server.init();
    management = server.createClient();
    temporal = TestWorkflowEnvironment.newInstance();
  }

  @AfterEach
  void stop() {
    temporal.close();
    management.close();
    server.destroy();
  }

  private int run(String... args) {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    CliContext context = CliContext.of(temporal.getWorkflowClient(), "q", o, 0).withKubernetes(path -> management);
    return InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }

  private void create(String kind, String name, Map<String, Object> spec, Map<String, Object> status) {
    GenericKubernetesResource r = new GenericKubernetesResourceBuilder().withApiVersion("upgrade.inplace.dev/v1alpha1")
        .withKind(kind).withNewMetadata().withNamespace("fleet").withName(name).endMetadata().build();
    r.setAdditionalProperty("spec", spec);
    r.setAdditionalProperty("status", status);
    management.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup("upgrade.inplace.dev")
        .withVersion("v1alpha1").withKind(kind).withPlural(kind.toLowerCase() + "s").withNamespaced(true).build())
        .resource(r).create();
  }

  private void twoEndedRunsAndOneGoing() {
    create("ControlPlaneUpgrade", "cp-to-1-31", Map.of("clusterName", "edge-1", "version", "v1.31.2+k3s1"),
        Map.of("history", List.of(Map.of("workflowId", "cp-upgrade/fleet/cp-to-1-31/u1", "fromVersion", "v1.30.6+k3s1",
            "toVersion", "v1.31.2+k3s1", "started", "2026-11-20T10:00:00Z", "finished", "2026-11-20T10:09:00Z",
            "result", "Succeeded", "total", 3, "upgraded", 3, "failed", 0, "skipped", 0))));
    create("WorkersUpgrade", "w-to-1-31", Map.of("clusterName", "edge-1", "version", "v1.31.2+k3s1"),
        Map.of("startTime", "2026-11-20T10:10:00Z",
            "history", List.of(Map.of("workflowId", "workers-upgrade/fleet/w-to-1-31/u2/md-a", "machineDeployment", "md-a",
                "fromVersion", "v1.30.6+k3s1", "started", "2026-11-20T10:10:00Z",
                "finished", "2026-11-20T10:20:00Z", "result", "Failed", "reason", "VerifyFailed",
                "total", 3, "upgraded", 2, "failed", 1)),
            "runs", List.of(
                Map.of("workflowId", "workers-upgrade/fleet/w-to-1-31/u2/md-a", "machineDeployment", "md-a", "phase", "Failed"),
                Map.of("workflowId", "workers-upgrade/fleet/w-to-1-31/u2/md-b", "machineDeployment", "md-b",
                    "fromVersion", "v1.30.6+k3s1", "phase", "Upgrading")),
            "nodes", List.of(Map.of("pool", "md-b", "node", "b-1", "phase", "Upgraded"),
                Map.of("pool", "md-b", "node", "b-2", "phase", "Upgrading"))));
    // Another cluster's CR stays out.
    create("ControlPlaneUpgrade", "other", Map.of("clusterName", "edge-2", "version", "v1.31.2+k3s1"),
        Map.of("history", List.of(Map.of("workflowId", "cp-upgrade/fleet/other/u3", "result", "Succeeded"))));
  }

  @Test
  void jsonListsTheClustersRunsNewestFirstWithFromToTimesResultAndCountsAndSaysListIsMissing() throws Exception {
    twoEndedRunsAndOneGoing();

    assertEquals(0, run("history", "fleet/edge-1", "-o", "json"), err.toString());
    JsonNode h = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));

    JsonNode runs = h.path("runs");
    assertEquals(3, runs.size(), h.toString());
    assertEquals("workers-upgrade/fleet/w-to-1-31/u2/md-b", runs.get(0).path("workflowId").asText(), "the run still going: newest start");
    assertEquals("Upgrading", runs.get(0).path("result").asText());
    assertTrue(runs.get(0).path("finished").isMissingNode());
    assertEquals(2, runs.get(0).path("total").asInt());
    assertEquals(1, runs.get(0).path("upgraded").asInt());
    assertEquals("workers-upgrade/fleet/w-to-1-31/u2/md-a", runs.get(1).path("workflowId").asText());
    assertEquals("Failed", runs.get(1).path("result").asText());
    assertEquals("VerifyFailed", runs.get(1).path("reason").asText());
    assertEquals(1, runs.get(1).path("failed").asInt());
    assertEquals("WorkersUpgrade/w-to-1-31", runs.get(1).path("source").asText());
    JsonNode cp = runs.get(2);
    assertEquals("ControlPlaneUpgrade", cp.path("kind").asText());
    assertEquals("v1.30.6+k3s1", cp.path("fromVersion").asText());
    assertEquals("v1.31.2+k3s1", cp.path("toVersion").asText());
    assertEquals("2026-11-20T10:00:00Z", cp.path("started").asText());
    assertEquals("2026-11-20T10:09:00Z", cp.path("finished").asText());
    assertEquals(List.of(HistoryReader.NO_LIST), List.of(h.path("notes").get(0).asText()),
        "the test server has no List: said, not silently empty");
  }

  @Test
  void theTableShowsOneRowPerRunAndTheNote() {
    twoEndedRunsAndOneGoing();

    assertEquals(0, run("history", "fleet/edge-1"), err.toString());
    String table = out.toString(StandardCharsets.UTF_8);

    List<String> lines = table.lines().toList();
    assertTrue(lines.get(0).startsWith("STARTED"), table);
    assertTrue(lines.get(3).contains("v1.30.6+k3s1") && lines.get(3).contains("v1.31.2+k3s1")
        && lines.get(3).contains("Succeeded") && lines.get(3).contains("3/3"), table);
    assertTrue(lines.get(2).contains("Failed (VerifyFailed)") && lines.get(2).contains("2/3 1 failed"), table);
    assertTrue(table.contains("note: " + HistoryReader.NO_LIST), table);
    assertTrue(!table.contains("edge-2") && !table.contains("cp-upgrade/fleet/other"), table);
  }

  @Test
  void aBadClusterReferenceIsAUsageError() {
    assertEquals(CliErrors.USAGE, run("history", "edge-1"));
    assertTrue(err.toString().contains("NS/NAME must be namespace/name"), err.toString());
  }

  @Test
  void aRunListedByVisibilityGivesKindFromToTimesAndResultFromItsSearchAttributesAndMemo() {
    Instant start = Instant.parse("2026-11-21T08:00:00Z");
    WorkflowExecutionInfo info = WorkflowExecutionInfo.newBuilder()
        .setExecution(WorkflowExecution.newBuilder().setWorkflowId("cp-upgrade/fleet/edge-1/v1.31.2+k3s1").setRunId("r"))
        .setType(WorkflowType.newBuilder().setName("ControlPlaneUpgrade"))
        .setStatus(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_CANCELED)
        .setStartTime(Timestamp.newBuilder().setSeconds(start.getEpochSecond()))
        .setCloseTime(Timestamp.newBuilder().setSeconds(start.getEpochSecond() + 600))
        .setSearchAttributes(SearchAttributesUtil.encodeTyped(io.temporal.common.SearchAttributes.newBuilder()
            .set(RunSearchAttributes.KIND, RunSearchAttributes.KIND_CONTROL_PLANE)
            .set(RunSearchAttributes.TARGET_VERSION, "v1.31.2+k3s1").build()))
        .setMemo(Memo.newBuilder().putFields(HistoryReader.MEMO_FROM_VERSION,
            DefaultDataConverter.newDefaultInstance().toPayload("v1.30.6+k3s1").orElseThrow()))
        .build();

    ClusterHistory.Run r = HistoryReader.run(new WorkflowExecutionMetadata(info, DefaultDataConverter.newDefaultInstance()));

    assertEquals("ControlPlaneUpgrade", r.kind());
    assertEquals("v1.30.6+k3s1", r.fromVersion());
    assertEquals("v1.31.2+k3s1", r.toVersion());
    assertEquals("2026-11-21T08:00:00Z", r.started());
    assertEquals("2026-11-21T08:10:00Z", r.finished());
    assertEquals("Aborted", r.result());
    assertEquals("temporal", r.source());
    assertEquals("InplaceCluster = 'fleet/edge-1' AND InplaceKind IN ('ControlPlaneUpgrade', 'WorkersUpgrade')",
        HistoryReader.query("fleet", "edge-1"));
  }
}
