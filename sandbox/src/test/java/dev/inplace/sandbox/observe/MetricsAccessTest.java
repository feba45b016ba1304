package dev.inplace.sandbox.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.kube.ApiRequest;
import dev.inplace.sandbox.kube.SandboxApiServer;
import dev.inplace.worker.observe.KubernetesMetricsAccess;
import dev.inplace.worker.observe.ObservabilityServer;
import dev.inplace.worker.observe.Readiness;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * /metrics as deployed: the caller's bearer token goes to the management API server (TokenReview),
 * its user must be allowed get /metrics (SubjectAccessReview); the probes stay open.
 */
class MetricsAccessTest {
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final AtomicReference<KubernetesClient> management = new AtomicReference<>();
  private SandboxApiServer api;
  private KubernetesClient worker;
  private ObservabilityServer server;

  @BeforeEach
  void start() {
    api = SandboxApiServer.start();
    worker = api.newClient(SandboxApiServer.WORKER_TOKEN);
    server = ObservabilityServer.start("127.0.0.1", 0, () -> "inplace_up 1\n", new Readiness(),
        new KubernetesMetricsAccess(management::get));
  }

  @AfterEach
  void stop() {
    server.close();
    worker.close();
    api.close();
  }

  private HttpResponse<String> get(String path, String token) throws Exception {
    HttpRequest.Builder request = HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path))
        .timeout(Duration.ofSeconds(10));
    if (token != null) {
      request.header("Authorization", "Bearer " + token);
    }
    return http.send(request.build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void onlyACallerAllowedGetMetricsReadsThemAndTheProbesStayOpen() throws Exception {
    assertEquals(503, get("/metrics", SandboxApiServer.METRICS_READER_TOKEN).statusCode(),
        "before the worker has its management client it cannot ask who calls");
    management.set(worker);

    HttpResponse<String> reader = get("/metrics", SandboxApiServer.METRICS_READER_TOKEN);
    assertEquals(200, reader.statusCode(), reader.body());
    assertEquals("inplace_up 1\n", reader.body());
    HttpResponse<String> anonymous = get("/metrics", null);
    assertEquals(401, anonymous.statusCode());
    assertEquals("Bearer", anonymous.headers().firstValue("WWW-Authenticate").orElse(""));
    assertFalse(anonymous.body().contains("inplace_up"));
    assertEquals(401, get("/metrics", "a-token-nobody-issued").statusCode());
    HttpResponse<String> authenticatedButNotAllowed = get("/metrics", SandboxApiServer.WORKER_TOKEN);
    assertEquals(403, authenticatedButNotAllowed.statusCode());
    assertFalse(authenticatedButNotAllowed.body().contains("inplace_up"));

    assertEquals(200, get("/healthz", null).statusCode());
    assertEquals(200, get("/readyz", null).statusCode());
  }

  @Test
  void scrapesWaitingOnAnApiServerThatDoesNotAnswerHoldNeitherTheProbesNorThemselvesForLong() throws Exception {
    try (java.net.ServerSocket silent = new java.net.ServerSocket(0, 50, java.net.InetAddress.getLoopbackAddress());
        KubernetesClient mute = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(
            new io.fabric8.kubernetes.client.ConfigBuilder().withMasterUrl("http://127.0.0.1:" + silent.getLocalPort())
                .withOauthToken("t").build()).build()) {
      management.set(mute); // accepts connections (the backlog) and never answers
      List<java.util.concurrent.CompletableFuture<HttpResponse<String>>> scrapes = new java.util.ArrayList<>();
      for (int i = 0; i < 3; i++) {
        scrapes.add(http.sendAsync(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + "/metrics"))
            .header("Authorization", "Bearer token-" + i).build(), HttpResponse.BodyHandlers.ofString()));
      }
      assertEquals(200, get("/healthz", null).statusCode());
      assertEquals(200, get("/readyz", null).statusCode());
      assertTrue(scrapes.stream().noneMatch(java.util.concurrent.CompletableFuture::isDone),
          "the probes answered while every scrape still waited on the API server");
      for (var scrape : scrapes) {
        HttpResponse<String> answer = scrape.get(60, java.util.concurrent.TimeUnit.SECONDS);
        assertEquals(503, answer.statusCode(), answer.body());
      }
    }
  }

  @Test
  void aScrapeEvery15SecondsAsksTheApiServerOncePerMinuteNotEachTime() throws Exception {
    management.set(worker);
    for (int i = 0; i < 5; i++) {
      assertEquals(200, get("/metrics", SandboxApiServer.METRICS_READER_TOKEN).statusCode());
    }
    long reviews = api.requestsBy(SandboxApiServer.WORKER_TOKEN).stream()
        .filter(r -> r.resource().equals("tokenreviews") || r.resource().equals("subjectaccessreviews")).count();
    assertEquals(2, reviews, "one TokenReview and one SubjectAccessReview: " + api.requestsBy(SandboxApiServer.WORKER_TOKEN));
    assertTrue(api.requestsBy(SandboxApiServer.WORKER_TOKEN).stream().map(ApiRequest::verb).allMatch("create"::equals));
  }
}
