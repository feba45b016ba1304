package dev.inplace.sandbox.stack;

import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.estate.EstateView;
import dev.inplace.sandbox.truth.EstateReport;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URLEncoder;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

/** The estate process of the local stack, seen from another process: its kubeconfig and control endpoint. */
public final class RemoteEstate implements EstateView, AutoCloseable {
  private final EstateDescription description;
  private final KubernetesClient management;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private RemoteEstate(EstateDescription description, KubernetesClient management) {
    this.description = description;
    this.management = management;
  }

  /** Connects to the estate of the stack in {@code layout} (it must be ready). */
  public static RemoteEstate open(StackLayout layout) {
    EstateDescription description = EstateDescription.read(layout.estateDescription());
    try {
      String kubeconfig = Files.readString(Path.of(description.managementKubeconfig()));
      return new RemoteEstate(
          description, new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(kubeconfig)).build());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read " + description.managementKubeconfig(), e);
    }
  }

  public EstateDescription description() {
    return description;
  }

  @Override
  public KubernetesClient management() {
    return management;
  }

  @Override
  public SshSettings ssh() {
    return description.ssh();
  }

  @Override
  public Path catalogue() {
    return Path.of(description.catalogue());
  }

  @Override
  public ClusterRef cluster() {
    return new ClusterRef(description.namespace(), description.cluster());
  }

  @Override
  public List<String> pools() {
    return description.pools();
  }

  @Override
  public List<Estate.EstateNode> nodes() {
    return description.nodes();
  }

  @Override
  public void clearFaults(String node) {
    post("/faults/clear?node=" + URLEncoder.encode(node, StandardCharsets.UTF_8));
  }

  /** Ground truth per node as the estate reports it (JSON array), read from the workload API server. */
  public String groundTruth() {
    return send(HttpRequest.newBuilder(URI.create(description.controlUrl() + "/nodes")).GET().build());
  }

  /** The estate's whole ground truth ({@code GET /report}). */
  public EstateReport report() {
    return EstateReport.fromJson(
        send(HttpRequest.newBuilder(URI.create(description.controlUrl() + "/report")).GET().build()));
  }

  /**
   * Sets the SSH faults of every host from now on ({@code POST /faults/ssh}); answers the settings
   * and the counters so far as JSON ({@code dropPercent}, {@code hangPercent}, {@code seed}, {@code
   * sshDropped}, {@code sshHung}).
   */
  public String setSshFaults(int dropPercent, int hangPercent, long seed) {
    return post("/faults/ssh?drop=" + dropPercent + "&hang=" + hangPercent + "&seed=" + seed);
  }

  private String post(String path) {
    return send(HttpRequest.newBuilder(URI.create(description.controlUrl() + path)).POST(HttpRequest.BodyPublishers.noBody()).build());
  }

  private String send(HttpRequest request) {
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        throw new IllegalStateException("estate " + request.uri() + " answered " + response.statusCode() + ": " + response.body());
      }
      return response.body();
    } catch (IOException e) {
      throw new UncheckedIOException("estate control endpoint unreachable: " + request.uri(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted", e);
    }
  }

  @Override
  public void close() {
    management.close();
  }
}
