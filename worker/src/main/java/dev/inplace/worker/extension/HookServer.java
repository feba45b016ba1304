package dev.inplace.worker.extension;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpsConfigurator;
import com.sun.net.httpserver.HttpsParameters;
import com.sun.net.httpserver.HttpsServer;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLParameters;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Runtime SDK HTTPS endpoint (JDK {@code HttpsServer}, no framework): {@code POST
 * [prefix]/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery} and one path per handler. Every
 * well-formed hook call is answered 200 with a JSON body; a request CAPI would never send is refused
 * without harm: wrong method 405, unknown path 404, body over the limit 413, unparsable or incomplete
 * JSON 200 with status Failure and the reason. A request must arrive within the read timeout
 * (otherwise its connection is closed, so a slow sender cannot hold a thread), and each answer is
 * computed within the caller's {@code ?timeout=} (else a Failure, which CAPI retries).
 */
public final class HookServer implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(HookServer.class);

  /**
   * The JDK server reads its timeouts from these properties once per JVM, when it is first used;
   * the first HookServer started sets them unless they are already set.
   */
  static final String MAX_REQUEST_TIME_PROPERTY = "sun.net.httpserver.maxReqTime";
  static final String MAX_RESPONSE_TIME_PROPERTY = "sun.net.httpserver.maxRspTime";

  private static final Pattern GO_DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m|h)");
  private static final Duration MARGIN = Duration.ofMillis(500);
  private static final ObjectMapper JSON =
      JsonMapper.builder()
          .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
          .build();

  static {
    JSON.getFactory()
        .setStreamReadConstraints(
            StreamReadConstraints.builder().maxNestingDepth(100).maxStringLength(1 << 20).maxNumberLength(100).build());
  }

  /** One hook this server answers: its name and how. */
  record Endpoint(String hook, Function<JsonNode, ObjectNode> handler) {}

  private final HttpsServer server;
  private final ThreadPoolExecutor http;
  private final ThreadPoolExecutor work;
  private final Map<String, Endpoint> endpoints;
  private final int maxBodyBytes;
  /** Answered hook calls, by "hook/status" (discovery included), since the start. */
  private final java.util.concurrent.ConcurrentMap<String, java.util.concurrent.atomic.LongAdder> answered =
      new java.util.concurrent.ConcurrentHashMap<>();

  private HookServer(
      HttpsServer server, ThreadPoolExecutor http, ThreadPoolExecutor work, Map<String, Endpoint> endpoints, int maxBodyBytes) {
    this.server = server;
    this.http = http;
    this.work = work;
    this.endpoints = endpoints;
    this.maxBodyBytes = maxBodyBytes;
  }

  /**
   * Serves the three in-place hooks, GenerateUpgradePlan and discovery.
   *
   * @param canUpdateMachine answers CanUpdateMachine requests
   * @param canUpdateMachineSet answers CanUpdateMachineSet requests
   * @param updateMachine answers UpdateMachine requests
   * @param generateUpgradePlan answers GenerateUpgradePlan requests
   */
  static HookServer start(
      ExtensionOptions options,
      Function<JsonNode, ObjectNode> canUpdateMachine,
      Function<JsonNode, ObjectNode> canUpdateMachineSet,
      Function<JsonNode, ObjectNode> updateMachine,
      Function<JsonNode, ObjectNode> generateUpgradePlan) {
    Map<String, Endpoint> endpoints = new LinkedHashMap<>();
    endpoints.put("discovery", new Endpoint(Hooks.DISCOVERY, request -> discovery()));
    endpoints.put(path(Hooks.CAN_UPDATE_MACHINE, Hooks.CAN_UPDATE_MACHINE_HANDLER),
        new Endpoint(Hooks.CAN_UPDATE_MACHINE, canUpdateMachine));
    endpoints.put(path(Hooks.CAN_UPDATE_MACHINE_SET, Hooks.CAN_UPDATE_MACHINE_SET_HANDLER),
        new Endpoint(Hooks.CAN_UPDATE_MACHINE_SET, canUpdateMachineSet));
    endpoints.put(path(Hooks.UPDATE_MACHINE, Hooks.UPDATE_MACHINE_HANDLER),
        new Endpoint(Hooks.UPDATE_MACHINE, updateMachine));
    endpoints.put(path(Hooks.GENERATE_UPGRADE_PLAN, Hooks.GENERATE_UPGRADE_PLAN_HANDLER),
        new Endpoint(Hooks.GENERATE_UPGRADE_PLAN, generateUpgradePlan));

    installRequestLimits(options);
    SSLContext tls = ReloadingTls.serverContext(options.tlsCert(), options.tlsKey(), options.clientCa(),
        ClientNames.of(options.clientNames()));
    boolean clientAuth = options.clientCa().isPresent();
    if (!clientAuth) {
      log.warn("CAPI runtime extension serving WITHOUT client certificates ({}=true): anyone who reaches"
          + " its port can call UpdateMachine; set {} for mutual TLS", ExtensionOptions.ALLOW_UNAUTHENTICATED,
          ExtensionOptions.CLIENT_CA);
    }
    HttpsServer server;
    try {
      server = HttpsServer.create(new InetSocketAddress(options.bindAddress(), options.port()), 64);
    } catch (IOException e) {
      throw new IllegalStateException(
          "cannot listen on " + options.bindAddress() + ":" + options.port() + ": " + e.getMessage(), e);
    }
    server.setHttpsConfigurator(
        new HttpsConfigurator(tls) {
          @Override
          public void configure(HttpsParameters params) {
            SSLParameters ssl = tls.getDefaultSSLParameters();
            ssl.setProtocols(new String[] {"TLSv1.3", "TLSv1.2"});
            ssl.setNeedClientAuth(clientAuth);
            params.setSSLParameters(ssl);
          }
        });
    // Bounded: beyond threads + queue the JDK server closes new connections instead of queueing them.
    ThreadPoolExecutor http = pool("inplace-hook-http", options.threads(), options.threads() * 4);
    ThreadPoolExecutor work = pool("inplace-hook-work", options.threads(), options.threads() * 4);
    server.setExecutor(http);
    HookServer hooks = new HookServer(server, http, work, endpoints, options.maxBodyBytes());
    server.createContext("/", hooks::serve);
    server.start();
    log.info("CAPI runtime extension listening on https://{}:{} (client certificates {})",
        options.bindAddress(), server.getAddress().getPort(), clientAuth ? "required" : "not required");
    return hooks;
  }

  public int port() {
    return server.getAddress().getPort();
  }

  /**
   * How many calls each hook answered since the start, by {@code "<hook>/<status>"} (e.g. {@code
   * "UpdateMachine/Success"}); refused requests (404, 405, 413) are not counted.
   */
  public Map<String, Long> answeredCalls() {
    Map<String, Long> counts = new java.util.TreeMap<>();
    answered.forEach((k, v) -> counts.put(k, v.sum()));
    return counts;
  }

  /** The path of a handler below the hook group root, as CAPI builds it: lower-case hook name, handler name. */
  static String path(String hook, String handler) {
    return hook.toLowerCase(java.util.Locale.ROOT) + "/" + handler;
  }

  /** The handlers this extension declares: one per in-place hook and GenerateUpgradePlan, 10 s each, failurePolicy Fail. */
  static ObjectNode discovery() {
    ObjectNode response = Hooks.response(Hooks.DISCOVERY, Hooks.SUCCESS, "");
    ArrayNode handlers = response.putArray("handlers");
    Map<String, String> declared = new LinkedHashMap<>();
    declared.put(Hooks.CAN_UPDATE_MACHINE_HANDLER, Hooks.CAN_UPDATE_MACHINE);
    declared.put(Hooks.CAN_UPDATE_MACHINE_SET_HANDLER, Hooks.CAN_UPDATE_MACHINE_SET);
    declared.put(Hooks.UPDATE_MACHINE_HANDLER, Hooks.UPDATE_MACHINE);
    declared.put(Hooks.GENERATE_UPGRADE_PLAN_HANDLER, Hooks.GENERATE_UPGRADE_PLAN);
    declared.forEach(
        (name, hook) -> {
          ObjectNode h = handlers.addObject();
          h.put("name", name);
          ObjectNode requestHook = h.putObject("requestHook");
          requestHook.put("apiVersion", Hooks.API_VERSION);
          requestHook.put("hook", hook);
          h.put("timeoutSeconds", Hooks.TIMEOUT_SECONDS);
          // Fail, never Ignore: an ignored UpdateMachine error reads as "update done" (capi-contracts s.2).
          h.put("failurePolicy", "Fail");
        });
    return response;
  }

  private void serve(HttpExchange exchange) {
    try (exchange) {
      String path = exchange.getRequestURI().getPath();
      int root = path == null ? -1 : path.indexOf(Hooks.PATH_ROOT);
      Endpoint endpoint = root < 0 ? null : endpoints.get(path.substring(root + Hooks.PATH_ROOT.length()));
      if (endpoint == null) {
        plain(exchange, 404, "no such hook: " + path);
        return;
      }
      if (!"POST".equals(exchange.getRequestMethod())) {
        exchange.getResponseHeaders().set("Allow", "POST");
        plain(exchange, 405, "hooks are called with POST");
        return;
      }
      byte[] body = body(exchange);
      if (body == null) {
        exchange.getResponseHeaders().set("Connection", "close");
        plain(exchange, 413, "request body over " + maxBodyBytes + " bytes");
        return;
      }
      ObjectNode answer = answer(endpoint, body, budget(exchange.getRequestURI().getRawQuery()));
      answered.computeIfAbsent(endpoint.hook() + "/" + answer.path("status").asText(""),
          k -> new java.util.concurrent.atomic.LongAdder()).increment();
      json(exchange, answer);
    } catch (IOException e) {
      // The client went away or the read timeout closed the connection: nobody to answer.
      log.debug("hook connection closed: {}", e.toString());
    } catch (RuntimeException e) {
      log.warn("hook request failed", e);
    }
  }

  /** The body, or null when it is larger than the limit (declared or actual). */
  private byte[] body(HttpExchange exchange) throws IOException {
    String declared = exchange.getRequestHeaders().getFirst("Content-Length");
    if (declared != null) {
      try {
        if (Long.parseLong(declared.trim()) > maxBodyBytes) {
          return null;
        }
      } catch (NumberFormatException e) {
        return null;
      }
    }
    InputStream in = exchange.getRequestBody();
    ByteArrayOutputStream out = new ByteArrayOutputStream();
    byte[] buffer = new byte[8192];
    int n;
    while ((n = in.read(buffer)) != -1) {
      out.write(buffer, 0, n);
      if (out.size() > maxBodyBytes) {
        return null;
      }
    }
    return out.toByteArray();
  }

  /** What is wrong with the request's {@code field} when it is not {@code expected}; null when it is. */
  private static String mismatch(JsonNode request, String field, String expected) {
    String got = request.path(field).asText("");
    return got.equals(expected) ? null
        : "expected " + field + " " + expected + ", got " + (got.isEmpty() ? "none" : shorten(got));
  }

  /** The answer to a hook call: the handler's, or a Failure naming what was wrong with the request. */
  private ObjectNode answer(Endpoint endpoint, byte[] body, Duration budget) {
    JsonNode request;
    try {
      request = body.length == 0 ? JsonNodeFactory.instance.objectNode() : JSON.readTree(body);
    } catch (JsonProcessingException e) {
      return Hooks.failure(endpoint.hook(), "request body is not valid JSON: " + shorten(e.getOriginalMessage()));
    } catch (IOException e) {
      return Hooks.failure(endpoint.hook(), "request body cannot be read: " + e.getClass().getSimpleName());
    }
    if (request == null || !request.isObject()) {
      return Hooks.failure(endpoint.hook(), "request body must be a JSON object");
    }
    // CAPI's runtime client sets both on every request, DiscoveryRequest too: a body without them is
    // not from CAPI, and is refused before any handler reads it.
    String wrongEnvelope = mismatch(request, "kind", endpoint.hook() + "Request");
    if (wrongEnvelope == null) {
      wrongEnvelope = mismatch(request, "apiVersion", Hooks.API_VERSION);
    }
    if (wrongEnvelope != null) {
      return Hooks.failure(endpoint.hook(), wrongEnvelope);
    }
    Future<ObjectNode> result;
    try {
      result = work.submit(() -> safely(endpoint, request));
    } catch (RejectedExecutionException e) {
      return Hooks.failure(endpoint.hook(), "too many requests in flight; try again");
    }
    try {
      return result.get(budget.toMillis(), TimeUnit.MILLISECONDS);
    } catch (TimeoutException e) {
      // The work goes on (it is idempotent); CAPI asks again and finds its result.
      return Hooks.failure(endpoint.hook(), "no answer within " + budget.toMillis() + " ms; try again");
    } catch (ExecutionException e) {
      return Hooks.failure(endpoint.hook(), "internal error: " + e.getCause().getClass().getSimpleName());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return Hooks.failure(endpoint.hook(), "interrupted");
    }
  }

  private static ObjectNode safely(Endpoint endpoint, JsonNode request) {
    try {
      return endpoint.handler().apply(request);
    } catch (BadRequest | IllegalArgumentException e) {
      return Hooks.failure(endpoint.hook(), shorten(e.getMessage()));
    } catch (KubernetesClientException e) {
      log.warn("{}: Kubernetes API error {}", endpoint.hook(), e.getCode());
      return Hooks.failure(endpoint.hook(), "Kubernetes API error (HTTP " + e.getCode() + "); try again");
    } catch (RuntimeException e) {
      log.warn("{} failed", endpoint.hook(), e);
      return Hooks.failure(endpoint.hook(), "internal error: " + e.getClass().getSimpleName());
    }
  }

  /** The caller's {@code ?timeout=} (a Go duration: 10s, 1m, 500ms) less a margin; 10 s when absent. */
  static Duration budget(String rawQuery) {
    Duration timeout = Duration.ofSeconds(Hooks.TIMEOUT_SECONDS);
    if (rawQuery != null) {
      for (String pair : rawQuery.split("&")) {
        if (pair.startsWith("timeout=")) {
          timeout = goDuration(pair.substring("timeout=".length())).orElse(timeout);
        }
      }
    }
    Duration budget = timeout.minus(MARGIN);
    Duration max = Duration.ofSeconds(30);
    if (budget.compareTo(Duration.ofMillis(500)) < 0) {
      return Duration.ofMillis(500);
    }
    return budget.compareTo(max) > 0 ? max : budget;
  }

  private static java.util.Optional<Duration> goDuration(String text) {
    String decoded = java.net.URLDecoder.decode(text, StandardCharsets.UTF_8);
    Matcher m = GO_DURATION.matcher(decoded);
    long millis = 0;
    int end = 0;
    while (m.find() && m.start() == end) {
      double value = Double.parseDouble(m.group(1));
      millis += (long) (value * switch (m.group(2)) {
        case "ms" -> 1;
        case "s" -> 1_000;
        case "m" -> 60_000;
        default -> 3_600_000;
      });
      end = m.end();
    }
    return end == decoded.length() && end > 0 ? java.util.Optional.of(Duration.ofMillis(millis)) : java.util.Optional.empty();
  }

  private static void json(HttpExchange exchange, ObjectNode body) throws IOException {
    byte[] bytes = JSON.writeValueAsBytes(Hooks.redacted(body));
    exchange.getResponseHeaders().set("Content-Type", "application/json");
    exchange.sendResponseHeaders(200, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static void plain(HttpExchange exchange, int status, String text) throws IOException {
    byte[] bytes = (text + "\n").getBytes(StandardCharsets.UTF_8);
    exchange.getResponseHeaders().set("Content-Type", "text/plain; charset=utf-8");
    exchange.sendResponseHeaders(status, bytes.length);
    try (OutputStream out = exchange.getResponseBody()) {
      out.write(bytes);
    }
  }

  private static String shorten(String text) {
    if (text == null) {
      return "";
    }
    String oneLine = text.replaceAll("\\s+", " ");
    return oneLine.length() > 200 ? oneLine.substring(0, 200) + "..." : oneLine;
  }

  /**
   * Sets the JDK server's request read limit (against senders that stall mid-request) and response
   * limit. The JDK reads both once, when the first {@code HttpServer} of the process is created, and
   * they then hold for every server in it: a process that serves anything else over the JDK server
   * (the worker's /metrics) must call this before it starts that server, or the hooks lose their
   * read timeout.
   */
  public static void installRequestLimits(ExtensionOptions options) {
    setIfAbsent(MAX_REQUEST_TIME_PROPERTY, Long.toString(options.readTimeout().toSeconds()));
    setIfAbsent(MAX_RESPONSE_TIME_PROPERTY, Long.toString(Hooks.TIMEOUT_SECONDS * 3L));
  }

  private static void setIfAbsent(String property, String value) {
    if (System.getProperty(property) == null) {
      System.setProperty(property, value);
    }
  }

  private static ThreadPoolExecutor pool(String name, int threads, int queue) {
    AtomicInteger n = new AtomicInteger();
    return new ThreadPoolExecutor(
        threads, threads, 30, TimeUnit.SECONDS, new ArrayBlockingQueue<>(queue),
        r -> {
          Thread t = new Thread(r, name + "-" + n.incrementAndGet());
          t.setDaemon(true);
          return t;
        },
        new ThreadPoolExecutor.AbortPolicy());
  }

  @Override
  public void close() {
    server.stop(0);
    http.shutdownNow();
    work.shutdownNow();
  }
}
