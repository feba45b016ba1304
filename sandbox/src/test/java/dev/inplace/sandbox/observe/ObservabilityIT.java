package dev.inplace.sandbox.observe;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.demo.DemoOptions;
import dev.inplace.sandbox.demo.DemoRun;
import dev.inplace.sandbox.demo.DemoSummary;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.observe.MetricsAccess;
import dev.inplace.worker.observe.ObservabilityServer;
import dev.inplace.worker.observe.Readiness;
import dev.inplace.worker.observe.RunMetricsInterceptor;
import dev.inplace.worker.observe.WorkerMetrics;
import dev.inplace.workflows.api.WorkflowIds;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The worker's /healthz, /readyz and /metrics scraped while the demo upgrades the simulated estate
 * (real SSH hosts, API servers, kubelet simulator, in-process Temporal), wired as WorkerMain wires them.
 */
class ObservabilityIT {
  @TempDir Path dir;
  private final HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();

  private HttpResponse<String> get(int port, String path) throws Exception {
    return http.send(HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + path))
        .timeout(Duration.ofSeconds(10)).build(), HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void healthReadinessAndRunMetricsAreServedDuringARun() throws Exception {
    DemoOptions options = DemoOptions.parse(new String[] {
        "--control-planes", "1", "--pools", "1", "--workers", "2", "--binary-size-mib", "1"});
    AtomicReference<TemporalConnection> temporalRef = new AtomicReference<>();
    try (Estate estate = Estate.create(dir.resolve("estate"), options.estateSpec());
        WorkerMetrics metrics = new WorkerMetrics()) {
      AtomicReference<InplaceWorker> workerRef = new AtomicReference<>();
      Readiness readiness = Readiness.ofWorker(temporalRef::get, estate::management,
          () -> workerRef.get() == null ? null : workerRef.get()::isPolling);
      try (ObservabilityServer server = ObservabilityServer.start("127.0.0.1", 0, metrics::scrape, readiness,
          MetricsAccess.open())) {
        int port = server.port();
        HttpResponse<String> starting = get(port, "/readyz");
        assertEquals(503, starting.statusCode());
        assertTrue(starting.body().contains("temporal: connecting"), starting.body());
        assertEquals(200, get(port, "/healthz").statusCode());

        DemoSummary summary;
        List<String> readyDuringRun = new CopyOnWriteArrayList<>();
        List<Integer> healthDuringRun = new CopyOnWriteArrayList<>();
        List<String> inFlightSeen = new CopyOnWriteArrayList<>();
        try (TemporalConnection temporal = EmbeddedTemporal.start(metrics.scope());
            InplaceWorker worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, estate.workerManagement(),
                dir.resolve("cache"), estate.artifactPolicy(), new RunMetricsInterceptor(metrics.registry()))) {
          temporalRef.set(temporal);
          workerRef.set(worker);
          AtomicBoolean running = new AtomicBoolean(true);
          Thread scraper = new Thread(() -> {
            while (running.get()) {
              try {
                HttpResponse<String> ready = get(port, "/readyz");
                readyDuringRun.add(ready.statusCode() + " " + ready.body().trim());
                healthDuringRun.add(get(port, "/healthz").statusCode());
                Matcher m = Pattern.compile("(?m)^inplace_runs_in_flight\\{kind=\"node\"[^}]*} (\\S+)$")
                    .matcher(get(port, "/metrics").body());
                if (m.find() && Double.parseDouble(m.group(1)) > 0) {
                  // Scraped while a node run was in flight: was the worker ready then?
                  inFlightSeen.add(m.group(1) + " node runs, readyz " + ready.statusCode());
                }
                Thread.sleep(200);
              } catch (Exception e) {
                readyDuringRun.add("error " + e);
              }
            }
          }, "scraper");
          scraper.start();
          ByteArrayOutputStream printed = new ByteArrayOutputStream();
          try {
            summary = new DemoRun(estate, temporal.client(), WorkflowIds.TASK_QUEUE, options,
                new PrintStream(printed, true, StandardCharsets.UTF_8)).run();
          } finally {
            running.set(false);
            scraper.join();
          }
          assertEquals(3, summary.upgraded(), printed.toString(StandardCharsets.UTF_8));

          assertTrue(healthDuringRun.size() > 3 && healthDuringRun.stream().allMatch(c -> c == 200), healthDuringRun.toString());
          assertTrue(readyDuringRun.stream().noneMatch(r -> r.startsWith("error")), readyDuringRun.toString());
          assertTrue(inFlightSeen.stream().anyMatch(r -> r.endsWith("readyz 200")),
              "ready while a node run was in flight: " + inFlightSeen + " " + readyDuringRun);

          // Tally hands values to the registry every second.
          Thread.sleep(2 * 1000);
          String scrape = get(port, "/metrics").body();
          assertEquals(3.0, sum(scrape, "inplace_node_upgrades_total", "result=\"upgraded\""), scrape);
          assertEquals(2.0, sum(scrape, "inplace_node_upgrades_total", "role=\"worker\""), scrape);
          assertEquals(3.0, sum(scrape, "inplace_drain_seconds_count", ""), scrape);
          assertTrue(sum(scrape, "inplace_node_step_seconds_count", "step=\"install\"") == 3.0, scrape);
          assertTrue(scrape.contains("inplace_node_step_seconds_bucket{"), scrape);
          assertTrue(scrape.contains("inplace_runs_in_flight{kind=\"node\"} 0.0"), scrape);
          assertTrue(scrape.lines().anyMatch(l -> l.startsWith("temporal_")), "the SDK's own metrics");
        }
        // Temporal gone: not ready, and the reason says so; still alive.
        HttpResponse<String> gone = get(port, "/readyz");
        assertEquals(503, gone.statusCode());
        assertTrue(gone.body().contains("temporal: Temporal frontend not reachable"), gone.body());
        assertEquals(200, get(port, "/healthz").statusCode());
      }
    }
  }

  /** The sum of a metric's samples whose labels contain {@code label}. */
  private static double sum(String scrape, String name, String label) {
    double total = 0;
    for (String line : scrape.split("\n")) {
      if (line.startsWith(name + "{") && line.contains(label)) {
        total += Double.parseDouble(line.substring(line.lastIndexOf(' ') + 1));
      }
    }
    return total;
  }
}
