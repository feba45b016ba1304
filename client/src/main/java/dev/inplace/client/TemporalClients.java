package dev.inplace.client;

import io.grpc.netty.shaded.io.netty.handler.ssl.SslContext;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowClientOptions;
import io.temporal.serviceclient.SimpleSslContextBuilder;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;

/**
 * Connections to a Temporal frontend (self-hosted or Temporal Cloud): plain, mTLS with a client
 * certificate, or TLS with an API key. Shared by the worker and the CLI; the API key never appears
 * in a message.
 */
public final class TemporalClients {
  private TemporalClients() {}

  /** Service stubs for {@code address} ({@code host:port}). */
  public static WorkflowServiceStubs connect(
      String address, Optional<String> apiKey, Optional<Path> tlsCert, Optional<Path> tlsKey) {
    WorkflowServiceStubsOptions.Builder options = WorkflowServiceStubsOptions.newBuilder().setTarget(address);
    if (tlsCert.isPresent() && tlsKey.isPresent()) {
      options.setSslContext(mutualTls(tlsCert.get(), tlsKey.get()));
    } else if (apiKey.isPresent()) {
      options.setEnableHttps(true);
    }
    apiKey.ifPresent(key -> options.addApiKey(() -> key));
    return WorkflowServiceStubs.newServiceStubs(options.build());
  }

  public static WorkflowClient client(WorkflowServiceStubs service, String namespace) {
    return WorkflowClient.newInstance(service, WorkflowClientOptions.newBuilder().setNamespace(namespace).build());
  }

  private static SslContext mutualTls(Path certFile, Path keyFile) {
    try (InputStream cert = Files.newInputStream(certFile);
        InputStream key = Files.newInputStream(keyFile)) {
      return SimpleSslContextBuilder.forPKCS8(cert, key).build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the Temporal TLS client certificate or key", e);
    }
  }
}
