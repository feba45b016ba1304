package dev.inplace.client;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.nio.file.Path;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * An open connection to a Temporal frontend: the service stubs, a client on one namespace, and
 * whatever else must close with them (the sandbox's in-process server). The worker, the CLI and the
 * sandbox all hold one.
 */
public final class TemporalConnection implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(TemporalConnection.class);

  private final WorkflowServiceStubs service;
  private final WorkflowClient client;
  private final String namespace;
  private final AutoCloseable server;

  private TemporalConnection(WorkflowServiceStubs service, String namespace, AutoCloseable server) {
    this.service = service;
    this.namespace = namespace;
    this.server = server;
    this.client =
        WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace(namespace).build());
  }

  /** Connects to {@code address} ({@code host:port}). */
  public static TemporalConnection connect(
      String address, String namespace, Optional<String> apiKey, Optional<Path> tlsCert, Optional<Path> tlsKey) {
    log.info("connecting to Temporal at {} namespace {}", address, namespace);
    return new TemporalConnection(TemporalClients.connect(address, apiKey, tlsCert, tlsKey), namespace, null);
  }

  /**
   * Wraps stubs opened elsewhere (an in-process server's channel); {@code server}, when not null,
   * is closed after the stubs.
   */
  public static TemporalConnection over(WorkflowServiceStubs service, String namespace, AutoCloseable server) {
    return new TemporalConnection(service, namespace, server);
  }

  /** Registers inplace's search attributes in this namespace (see {@link SearchAttributeRegistration}). */
  public TemporalConnection withSearchAttributes() {
    SearchAttributeRegistration.ensure(service, namespace);
    return this;
  }

  public WorkflowClient client() {
    return client;
  }

  public WorkflowServiceStubs service() {
    return service;
  }

  public String namespace() {
    return namespace;
  }

  @Override
  public void close() {
    service.shutdownNow();
    if (server != null) {
      try {
        server.close();
      } catch (Exception e) {
        log.warn("cannot stop the Temporal server: {}", e.toString());
      }
    }
  }
}
