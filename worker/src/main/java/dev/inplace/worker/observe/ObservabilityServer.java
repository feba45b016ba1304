package dev.inplace.worker.observe;

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's plain-HTTP endpoints for Kubernetes and Prometheus: {@code /healthz} (200 while the
 * process lives), {@code /readyz} (200 when every {@link Readiness} check passes, else 503 naming
 * each problem) and {@code /metrics} (Prometheus text format) to the callers {@link MetricsAccess}
 * admits. Nothing secret is served; the probes stay open to the kubelet.
 */
public final class ObservabilityServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ObservabilityServer.class);
  private static final String PROMETHEUS_TEXT = "text/plain; version=0.0.4; charset=utf-8";

  private final HttpServer server;
  private final ExecutorService executor;
  private final ExecutorService scrapes;
  private final MetricsAccess access;

  private ObservabilityServer(HttpServer server, ExecutorService executor, ExecutorService scrapes, MetricsAccess access) {
    this.server = server;
    this.executor = executor;
    this.scrapes = scrapes;
    this.access = access;
  }

  /** Starts serving on {@code bindAddress:port} (port 0: any free port). */
  public static ObservabilityServer start(
      String bindAddress, int port, Supplier<String> metrics, Readiness readiness, MetricsAccess access) {
    HttpServer server;
    try {
      server = HttpServer.create(new InetSocketAddress(bindAddress, port), 16);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot serve /metrics, /healthz and /readyz on " + bindAddress + ":" + port, e);
    }
    server.createContext("/healthz", exchange -> answer(exchange, 200, "text/plain; charset=utf-8", "ok\n"));
    server.createContext("/readyz", exchange -> {
      List<String> problems = readiness.problems();
      if (problems.isEmpty()) {
        answer(exchange, 200, "text/plain; charset=utf-8", "ok\n");
      } else {
        answer(exchange, 503, "text/plain; charset=utf-8", String.join("\n", problems) + "\n");
      }
    });
    // Scrapes run apart from the probes: a check that waits on the API server never holds /healthz.
    // Two at once (a pool grows past its core size only once its queue is full), four waiting.
    ThreadPoolExecutor scrapes = new ThreadPoolExecutor(2, 2, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(4), r -> {
      Thread t = new Thread(r, "inplace-metrics");
      t.setDaemon(true);
      return t;
    });
    scrapes.allowCoreThreadTimeOut(true);
    server.createContext("/metrics", exchange -> {
      try {
        scrapes.execute(() -> scrape(exchange, metrics, access));
      } catch (RejectedExecutionException e) {
        answer(exchange, 503, "text/plain; charset=utf-8", "too many scrapes at once\n");
      }
    });
    ExecutorService executor = Executors.newFixedThreadPool(2, r -> {
      Thread t = new Thread(r, "inplace-http");
      t.setDaemon(true);
      return t;
    });
    server.setExecutor(executor);
    server.start();
    log.info("serving /metrics, /healthz and /readyz on {}:{}", bindAddress, server.getAddress().getPort());
    return new ObservabilityServer(server, executor, scrapes, access);
  }

  /** One scrape, on the scrapes' own threads: who asks, then the metrics or why not. */
  private static void scrape(HttpExchange exchange, Supplier<String> metrics, MetricsAccess access) {
    try {
      MetricsAccess.Decision decision = access.decide(exchange.getRequestHeaders().getFirst("Authorization"));
      if (decision == MetricsAccess.Decision.ALLOWED) {
        answer(exchange, 200, PROMETHEUS_TEXT, metrics.get());
        return;
      }
      if (decision == MetricsAccess.Decision.UNAUTHENTICATED) {
        exchange.getResponseHeaders().set("WWW-Authenticate", "Bearer");
      }
      answer(exchange, decision.status, "text/plain; charset=utf-8", switch (decision) {
        case UNAUTHENTICATED -> "a bearer token the API server accepts is required\n";
        case FORBIDDEN -> "not allowed: get /metrics (ClusterRole inplace-metrics-reader)\n";
        default -> "cannot check the caller now\n";
      });
    } catch (IOException | RuntimeException e) {
      log.debug("a scrape ended early: {}", e.toString());
      exchange.close();
    }
  }

  public int port() {
    return server.getAddress().getPort();
  }

  private static void answer(HttpExchange exchange, int status, String type, String body) throws IOException {
    try (exchange) {
      if (!exchange.getRequestMethod().equals("GET") && !exchange.getRequestMethod().equals("HEAD")) {
        exchange.sendResponseHeaders(405, -1);
        return;
      }
      String path = exchange.getRequestURI().getPath();
      if (!path.equals(exchange.getHttpContext().getPath())) {
        exchange.sendResponseHeaders(404, -1);
        return;
      }
      byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
      exchange.getResponseHeaders().set("Content-Type", type);
      boolean head = exchange.getRequestMethod().equals("HEAD");
      exchange.sendResponseHeaders(status, head ? -1 : bytes.length);
      if (!head) {
        try (OutputStream out = exchange.getResponseBody()) {
          out.write(bytes);
        }
      }
    }
  }

  @Override
  public void close() {
    server.stop(0);
    executor.shutdownNow();
    scrapes.shutdownNow();
    access.close();
  }
}
