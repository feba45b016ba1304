package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.ApiKeyOnTheWireTest;
import dev.inplace.client.RecordingGrpcProxy;
import dev.inplace.client.SearchAttributeRegistration;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.client.WorkflowClient;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import io.temporal.worker.WorkerFactory;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CLI with {@code TEMPORAL_API_KEY} set, through the recording TLS proxy in front of the
 * in-process test server (a stand-in WorkersUpgrade polled directly): upgrade, status and abort
 * send the key, and the namespace header, on every call they make.
 */
class CliApiKeyOnTheWireTest {
  private static final String WORKFLOW = "temporal.api.workflowservice.v1.WorkflowService/";

  @TempDir Path dir;
  private TestServer.InProcessTestServer server;
  private WorkflowServiceStubs direct;
  private WorkerFactory factory;
  private RecordingGrpcProxy proxy;

  @BeforeEach
  void start() throws Exception {
    server = TestServer.createServer(true);
    direct = WorkflowServiceStubs.newServiceStubs(WorkflowServiceStubsOptions.newBuilder().setChannel(server.getChannel()).build());
    SearchAttributeRegistration.ensure(direct, "default");
    factory = WorkerFactory.newInstance(WorkflowClient.newInstance(direct));
    factory.newWorker(WorkflowIds.TASK_QUEUE).registerWorkflowImplementationTypes(InplaceCliTest.RecordingWorkers.class);
    factory.start();
    proxy = new RecordingGrpcProxy(dir, server.getChannel());
  }

  @AfterEach
  void stop() throws Exception {
    proxy.close();
    factory.shutdownNow();
    factory.awaitTermination(10, TimeUnit.SECONDS);
    direct.shutdownNow();
    server.close();
  }

  private int cli(ByteArrayOutputStream out, ByteArrayOutputStream err, String... args) {
    return InplaceCli.run(args, ApiKeyOnTheWireTest.apiKeyEnvironment(proxy, dir),
        new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void upgradeStatusAndAbortSendTheApiKeyAndNamespaceOnEveryCall() throws Exception {
    Path catalogue = Files.writeString(dir.resolve("releases.json"), """
        {"releases":[{"version":"v1.31.2+k3s1","distribution":"K3S","arch":"amd64","artifacts":[
          {"name":"k3s","kind":"BINARY","source":"/srv/k3s","sha256":"%s","sizeBytes":10,
           "installPath":"/usr/local/bin/k3s","mode":"0755"}]}]}""".formatted("ab".repeat(32)));
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    ByteArrayOutputStream err = new ByteArrayOutputStream();
    assertEquals(0, cli(out, err, "upgrade", "workers", "--cluster=fleet/edge-1", "--machine-deployment=md",
        "--version=v1.31.2+k3s1", "--catalogue=" + catalogue, "--ssh-user=u", "--ssh-key-secret=k",
        "--known-hosts-secret=h"), err.toString());
    String id = out.toString(StandardCharsets.UTF_8).lines().filter(l -> l.startsWith("started "))
        .map(l -> l.substring("started ".length()).trim()).findFirst().orElseThrow(() -> new AssertionError(out));
    assertEquals(0, cli(out, err, "status", id), err.toString());
    assertEquals(0, cli(out, err, "abort", id), err.toString());

    var calls = proxy.calls();
    Set<String> methods = calls.stream().map(RecordingGrpcProxy.Call::method).collect(Collectors.toSet());
    for (String expected : Set.of("grpc.health.v1.Health/Check", WORKFLOW + "StartWorkflowExecution",
        WORKFLOW + "QueryWorkflow", WORKFLOW + "UpdateWorkflowExecution")) {
      assertTrue(methods.contains(expected), expected + " did not go through the proxy: " + methods);
    }
    ApiKeyOnTheWireTest.assertEveryCallCarriesTheKeyAndNamespace(calls, ApiKeyOnTheWireTest.API_KEY);
    String printed = out.toString(StandardCharsets.UTF_8) + err.toString(StandardCharsets.UTF_8);
    assertFalse(printed.contains(ApiKeyOnTheWireTest.API_KEY), printed);
  }
}
