package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.grpc.StatusRuntimeException;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.testserver.TestServer;
import io.temporal.worker.WorkerFactory;
import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.LoggerFactory;

/**
 * Connects exactly as an operator configures the temporal CLI for a self-hosted frontend behind TLS:
 * a private server CA, a server name that differs from the address, a client certificate, an API
 * key; starts, signals and queries a workflow through it.
 */
class TemporalTlsIT {
  private static final String API_KEY = "s3cr3t-api-key-never-logged";
  private static final String QUEUE = "tls-it";

  @WorkflowInterface
  public interface Greeter {
    @WorkflowMethod
    String greet(String name);

    @SignalMethod
    void finish();

    @QueryMethod
    String state();
  }

  public static class GreeterImpl implements Greeter {
    private boolean done;
    private String name = "";

    @Override
    public String greet(String name) {
      this.name = name;
      Workflow.await(() -> done);
      return "hello " + name;
    }

    @Override
    public void finish() {
      done = true;
    }

    @Override
    public String state() {
      return "waiting for " + name;
    }
  }

  @TempDir Path dir;
  private TestServer.PortBoundTestServer server;
  private TlsFrontend frontend;
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();

  @BeforeEach
  void start() throws Exception {
    int port = TlsFrontend.freePort();
    server = TestServer.createPortBoundServer(port, true);
    frontend = new TlsFrontend(dir, port);
    logs.start();
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).addAppender(logs);
  }

  @AfterEach
  void stop() throws Exception {
    ((Logger) LoggerFactory.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME)).detachAppender(logs);
    frontend.close();
    server.close();
  }

  private Map<String, String> env() {
    Map<String, String> env = new HashMap<>();
    env.put("TEMPORAL_ADDRESS", frontend.address());
    env.put("TEMPORAL_NAMESPACE", "default");
    env.put("TEMPORAL_API_KEY", API_KEY);
    env.put("TEMPORAL_TLS", "true");
    env.put("TEMPORAL_TLS_SERVER_CA_CERT_PATH", frontend.caCert.toString());
    env.put("TEMPORAL_TLS_SERVER_NAME", TlsFrontend.SERVER_NAME);
    env.put("TEMPORAL_TLS_CLIENT_CERT_PATH", frontend.clientCert.toString());
    env.put("TEMPORAL_TLS_CLIENT_KEY_PATH", frontend.clientKey.toString());
    env.put("TEMPORAL_CONFIG_FILE", dir.resolve("no-profile-file.toml").toString());
    return env;
  }

  @Test
  void startsAndQueriesAWorkflowOverTlsWithAPrivateCaAndServerName() throws Exception {
    TemporalSettings settings = TemporalSettings.fromEnvironment(env(), w -> {});
    try (TemporalConnection temporal = TemporalConnection.connect(settings)) {
      WorkerFactory factory = WorkerFactory.newInstance(temporal.client());
      factory.newWorker(QUEUE).registerWorkflowImplementationTypes(GreeterImpl.class);
      factory.start();
      try {
        Greeter greeter =
            temporal.client().newWorkflowStub(
                Greeter.class, WorkflowOptions.newBuilder().setWorkflowId("tls-greeting").setTaskQueue(QUEUE).build());
        WorkflowClient.start(greeter::greet, "edge-1");
        Greeter attached = temporal.client().newWorkflowStub(Greeter.class, "tls-greeting");
        assertEquals("waiting for edge-1", attached.state());
        attached.finish();
        assertEquals("hello edge-1",
            temporal.client().newUntypedWorkflowStub("tls-greeting").getResult(30, TimeUnit.SECONDS, String.class));
      } finally {
        factory.shutdownNow();
        factory.awaitTermination(10, TimeUnit.SECONDS);
      }
    }
    assertFalse(frontend.handshakes().isEmpty());
    assertTrue(frontend.handshakes().stream().allMatch("h2"::equals), frontend.handshakes().toString());
    String keyText = Files.readString(frontend.clientKey);
    String keyBody = keyText.split("\n")[1];
    for (ILoggingEvent event : logs.list) {
      String line = event.getFormattedMessage() + (event.getThrowableProxy() == null ? "" : event.getThrowableProxy().getMessage());
      assertFalse(line.contains(API_KEY), "API key logged: " + line);
      assertFalse(line.contains(keyBody), "client key logged: " + line);
    }
    assertTrue(logs.list.stream().anyMatch(e -> e.getFormattedMessage().contains("apiKey=(set)")),
        "the connection is logged, with the API key masked");
  }

  @Test
  void withoutTheServerNameTheCertificateDoesNotMatchAndNothingIsReached() throws Exception {
    Map<String, String> env = env();
    env.remove("TEMPORAL_TLS_SERVER_NAME");
    TemporalSettings settings = TemporalSettings.fromEnvironment(env, w -> {});
    try (TemporalConnection temporal = TemporalConnection.connect(settings)) {
      StatusRuntimeException e =
          assertThrows(StatusRuntimeException.class,
              () -> temporal.service().blockingStub().withDeadlineAfter(10, TimeUnit.SECONDS)
                  .getSystemInfo(GetSystemInfoRequest.getDefaultInstance()));
      assertFalse(e.toString().contains(API_KEY));
    }
    assertEquals(List.of(), frontend.handshakes());
  }
}
