package dev.inplace.worker;

import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.SimpleSslContextBuilder;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
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
    WorkflowServiceStubsOptions.Builder options =
        WorkflowServiceStubsOptions.newBuilder().setTarget(config.temporalAddress().get());
    if (config.temporalTlsCert().isPresent()) {
      options.setSslContext(mutualTls(config));
    } else if (config.temporalApiKey().isPresent()) {
      options.setEnableHttps(true);
    }
    config.temporalApiKey().ifPresent(key -> options.addApiKey(() -> key));
    log.info("connecting to Temporal at {} namespace {}", config.temporalAddress().get(), config.temporalNamespace());
    WorkflowServiceStubs stubs = WorkflowServiceStubs.newServiceStubs(options.build());
    SearchAttributeRegistration.ensure(stubs, config.temporalNamespace());
    return new TemporalConnection(stubs, config.temporalNamespace(), null);
  }

  private static SslContext mutualTls(WorkerConfig config) {
    try (InputStream cert = Files.newInputStream(config.temporalTlsCert().orElseThrow());
        InputStream key = Files.newInputStream(config.temporalTlsKey().orElseThrow())) {
      return SimpleSslContextBuilder.forPKCS8(cert, key).build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read Temporal TLS client certificate or key", e);
    }
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
