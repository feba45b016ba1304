package dev.inplace.client;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.common.converter.DataConverter;
import com.uber.m3.tally.Scope;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
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
    // Every process (worker, watcher, extension, CLI, sandbox) connects here, so all share one converter.
    this(service, namespace, server, PayloadEncryption.fromEnvironment(System.getenv()));
  }

  private TemporalConnection(
      WorkflowServiceStubs service, String namespace, AutoCloseable server, DataConverter converter) {
    this.service = service;
    this.namespace = namespace;
    this.server = server;
    this.client = WorkflowClient.newInstance(service,
        WorkflowClientOptions.newBuilder().setNamespace(namespace).setDataConverter(converter).build());
  }

  /** Connects as {@code settings} say (address, namespace, API key, TLS). */
  public static TemporalConnection connect(TemporalSettings settings) {
    return connect(settings, null);
  }

  /**
   * Connects as {@code settings} say, reporting the SDK's client metrics (requests, latencies,
   * long polls) to {@code metrics} when not null.
   */
  public static TemporalConnection connect(TemporalSettings settings, Scope metrics) {
    String address = settings.address()
        .orElseThrow(() -> new IllegalArgumentException(TemporalSettings.ADDRESS + " is not set"));
    log.info("connecting to Temporal: {}", settings);
    WorkflowServiceStubsOptions.Builder options = WorkflowServiceStubsOptions.newBuilder(settings.stubsOptions());
    options.setTarget(address);
    if (metrics != null) {
      options.setMetricsScope(metrics);
    }
    return new TemporalConnection(
        WorkflowServiceStubs.newServiceStubs(options.build()), settings.namespace(), null);
  }

  /**
   * Wraps stubs opened elsewhere (an in-process server's channel); {@code server}, when not null,
   * is closed after the stubs.
   */
  public static TemporalConnection over(WorkflowServiceStubs service, String namespace, AutoCloseable server) {
    return new TemporalConnection(service, namespace, server);
  }

  /** As above, with the data converter given instead of {@link PayloadEncryption#fromEnvironment}'s. */
  public static TemporalConnection over(
      WorkflowServiceStubs service, String namespace, AutoCloseable server, DataConverter converter) {
    return new TemporalConnection(service, namespace, server, converter);
  }

  /** Registers inplace's search attributes in this namespace (see {@link SearchAttributeRegistration}). */
  public TemporalConnection withSearchAttributes() {
    return withSearchAttributes(SearchAttributeRegistration.Mode.REGISTER);
  }

  /**
   * Registers inplace's search attributes, or only checks they exist, as {@code mode} says; throws
   * {@link IllegalStateException} naming the missing ones and the command that adds them.
   */
  public TemporalConnection withSearchAttributes(SearchAttributeRegistration.Mode mode) {
    SearchAttributeRegistration.ensure(service, namespace, mode);
    return this;
  }

  public WorkflowClient client() {
    return client;
  }

  /**
   * The client's stubs: every call carries what the connection's options add (the API key) and the
   * {@code temporal-namespace} header, as the SDK's own calls do.
   */
  public WorkflowServiceStubs service() {
    return client.getWorkflowServiceStubs();
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
