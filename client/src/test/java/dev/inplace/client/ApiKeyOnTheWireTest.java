package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testserver.TestServer;
import io.temporal.worker.WorkerFactory;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Connects exactly as the worker and the CLI do with {@code TEMPORAL_API_KEY} set, through a TLS
 * proxy that records what arrives on the wire, and proves that every call (workflow service,
 * operator service, health check) carries the key as the SDK sends it, and the namespace header
 * wherever the call is about the namespace.
 */
public class ApiKeyOnTheWireTest {
  public static final String API_KEY = "wire-test-api-key";
  private static final String QUEUE = "api-key-wire";
  private static final String OPERATOR = "temporal.api.operatorservice.v1.OperatorService/";
  private static final String WORKFLOW = "temporal.api.workflowservice.v1.WorkflowService/";
  /** Calls about the server, not a namespace: the SDK sends them without the namespace header. */
  private static final Set<String> SERVER_WIDE =
      Set.of(WORKFLOW + "GetSystemInfo", "grpc.health.v1.Health/Check");

  @WorkflowInterface
  public interface Echo {
    @WorkflowMethod
    String echo(String text);
  }

  public static class EchoImpl implements Echo {
    @Override
    public String echo(String text) {
      return text;
    }
  }

  @TempDir Path dir;
  private TestServer.InProcessTestServer server;
  private RecordingGrpcProxy proxy;

  @BeforeEach
  void start() throws Exception {
    server = TestServer.createServer(true);
    proxy = new RecordingGrpcProxy(dir, server.getChannel());
  }

  @AfterEach
  void stop() throws Exception {
    proxy.close();
    server.close();
  }

  /** What an operator sets for an API key: address, namespace, key; here also the proxy's private CA. */
  public static Map<String, String> apiKeyEnvironment(RecordingGrpcProxy proxy, Path dir) {
    Map<String, String> env = new HashMap<>();
    env.put("TEMPORAL_ADDRESS", proxy.address());
    env.put("TEMPORAL_NAMESPACE", "default");
    env.put("TEMPORAL_API_KEY", API_KEY);
    env.put("TEMPORAL_TLS_SERVER_CA_CERT_PATH", proxy.caCert.toString());
    env.put("TEMPORAL_TLS_SERVER_NAME", TlsFrontend.SERVER_NAME);
    env.put("TEMPORAL_CONFIG_FILE", dir.resolve("no-profile-file.toml").toString());
    return env;
  }

  /** Every recorded call carries {@code authorization: Bearer <key>}, and the namespace where it is about one. */
  public static void assertEveryCallCarriesTheKeyAndNamespace(List<RecordingGrpcProxy.Call> calls, String key) {
    assertFalse(calls.isEmpty(), "no call reached the proxy");
    List<RecordingGrpcProxy.Call> withoutKey =
        calls.stream().filter(c -> !("Bearer " + key).equals(c.authorization())).toList();
    assertEquals(List.of(), withoutKey, "calls without the API key");
    List<RecordingGrpcProxy.Call> withoutNamespace =
        calls.stream().filter(c -> !SERVER_WIDE.contains(c.method()) && !"default".equals(c.namespace())).toList();
    assertEquals(List.of(), withoutNamespace, "calls without the temporal-namespace header");
  }

  @Test
  void searchAttributeRegistrationAndEveryWorkerAndClientCallCarryTheApiKeyOnTheWire() throws Exception {
    TemporalSettings settings = TemporalSettings.fromEnvironment(apiKeyEnvironment(proxy, dir), w -> {});
    try (TemporalConnection temporal = TemporalConnection.connect(settings)) {
      temporal.service().connect(java.time.Duration.ofSeconds(10));
      temporal.withSearchAttributes(SearchAttributeRegistration.Mode.REGISTER);
      WorkerFactory factory = WorkerFactory.newInstance(temporal.client());
      factory.newWorker(QUEUE).registerWorkflowImplementationTypes(EchoImpl.class);
      factory.start();
      try {
        Echo echo = temporal.client().newWorkflowStub(
            Echo.class, WorkflowOptions.newBuilder().setWorkflowId("wire-echo").setTaskQueue(QUEUE).build());
        WorkflowExecution execution = WorkflowClient.start(echo::echo, "hello");
        assertEquals("hello",
            temporal.client().newUntypedWorkflowStub("wire-echo").getResult(30, TimeUnit.SECONDS, String.class));
        assertEquals("wire-echo",
            temporal.service().blockingStub().describeWorkflowExecution(
                DescribeWorkflowExecutionRequest.newBuilder().setNamespace("default").setExecution(execution).build())
                .getWorkflowExecutionInfo().getExecution().getWorkflowId());
      } finally {
        factory.shutdownNow();
        factory.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
    List<RecordingGrpcProxy.Call> calls = proxy.calls();
    Set<String> methods = calls.stream().map(RecordingGrpcProxy.Call::method).collect(Collectors.toSet());
    for (String expected :
        List.of(OPERATOR + "ListSearchAttributes", OPERATOR + "AddSearchAttributes", WORKFLOW + "StartWorkflowExecution",
            WORKFLOW + "PollWorkflowTaskQueue", WORKFLOW + "RespondWorkflowTaskCompleted",
            WORKFLOW + "GetWorkflowExecutionHistory", WORKFLOW + "DescribeWorkflowExecution", "grpc.health.v1.Health/Check")) {
      assertTrue(methods.contains(expected), expected + " did not go through the proxy: " + methods);
    }
    assertEveryCallCarriesTheKeyAndNamespace(calls, API_KEY);
  }
}
