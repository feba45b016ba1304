package dev.inplace.worker.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

class ObservabilityServerTest {
  private final HttpClient http = HttpClient.newHttpClient();

  private HttpResponse<String> get(ObservabilityServer server, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void readyzIs503NamingEveryFailingCheckAndHealthzStays200() throws Exception {
    AtomicBoolean polling = new AtomicBoolean(false);
    Readiness readiness = new Readiness()
        .add("temporal", () -> "Temporal frontend not reachable (UNAVAILABLE)")
        .add("worker", Readiness.polling(polling::get));
    try (ObservabilityServer server = ObservabilityServer.start("127.0.0.1", 0, () -> "m 1\n", readiness, MetricsAccess.open())) {
      HttpResponse<String> notReady = get(server, "/readyz");
      assertEquals(503, notReady.statusCode());
      assertTrue(notReady.body().contains("temporal: Temporal frontend not reachable (UNAVAILABLE)"), notReady.body());
      assertTrue(notReady.body().contains("worker: the worker is not polling its task queue"), notReady.body());
      assertEquals(200, get(server, "/healthz").statusCode());
      HttpResponse<String> metrics = get(server, "/metrics");
      assertEquals(200, metrics.statusCode());
      assertEquals("m 1\n", metrics.body());
      assertTrue(metrics.headers().firstValue("Content-Type").orElse("").startsWith("text/plain; version=0.0.4"));
      assertEquals(404, get(server, "/metrics/other").statusCode());
    }
  }

  @Test
  void readyzIs200WhenEveryCheckPasses() throws Exception {
    Readiness readiness = new Readiness().add("worker", Readiness.polling(() -> true));
    try (ObservabilityServer server = ObservabilityServer.start("127.0.0.1", 0, () -> "", readiness, MetricsAccess.open())) {
      assertEquals(200, get(server, "/readyz").statusCode());
    }
  }

  @Test
  void aCheckThatThrowsMakesTheWorkerNotReadyWithTheReason() {
    Readiness readiness = new Readiness().add("management-api", () -> {
      throw new IllegalStateException("boom");
    });
    assertEquals(java.util.List.of("management-api: IllegalStateException: boom"), readiness.problems());
  }
}
