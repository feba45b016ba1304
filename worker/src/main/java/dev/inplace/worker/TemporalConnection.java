package dev.inplace.worker;

import dev.inplace.workflows.client.TemporalClients;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A connection to Temporal: a real cluster or Temporal Cloud when an address is configured, otherwise
 * Temporal's test server started in this process (real time, no time skipping). The embedded server
 * keeps everything in memory: it survives worker restarts within the process, not its own.
 */
public final class TemporalConnection implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TemporalConnection.class);

  private final WorkflowServiceStubs service;
  private final WorkflowClient client;
  private final TestServer.InProcessTestServer embedded;

  private TemporalConnection(
      WorkflowServiceStubs service, String namespace, TestServer.InProcessTestServer embedded) {
    this.service = service;
    this.embedded = embedded;
    this.client =
        WorkflowClient.newInstance(
            service, WorkflowClientOptions.newBuilder().setNamespace(namespace).build());
  }

  public static TemporalConnection open(WorkerConfig config) {
    if (config.temporalAddress().isEmpty()) {
      // lockTimeSkipping=true: timers run in real time, as on a real server.
      TestServer.InProcessTestServer server = TestServer.createServer(true);
      WorkflowServiceStubs stubs =
          WorkflowServiceStubs.newServiceStubs(
              WorkflowServiceStubsOptions.newBuilder().setChannel(server.getChannel()).build());
      log.info("started embedded Temporal test server (in-process, in-memory)");
      TemporalConnection connection = new TemporalConnection(stubs, config.temporalNamespace(), server);
      SearchAttributeRegistration.ensure(stubs, config.temporalNamespace());
      return connection;
    }
    log.info("connecting to Temporal at {} namespace {}", config.temporalAddress().get(), config.temporalNamespace());
    WorkflowServiceStubs stubs =
        TemporalClients.connect(
            config.temporalAddress().get(), config.temporalApiKey(), config.temporalTlsCert(), config.temporalTlsKey());
    SearchAttributeRegistration.ensure(stubs, config.temporalNamespace());
    return new TemporalConnection(stubs, config.temporalNamespace(), null);
  }

  public WorkflowClient client() {
    return client;
  }

  public WorkflowServiceStubs service() {
    return service;
  }

  public boolean isEmbedded() {
    return embedded != null;
  }

  @Override
  public void close() {
    service.shutdownNow();
    if (embedded != null) {
      embedded.close();
    }
  }
}
