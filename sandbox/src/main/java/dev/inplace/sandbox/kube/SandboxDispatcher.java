package dev.inplace.sandbox.kube;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.ListMeta;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.mockwebserver.ServerRequest;
import io.fabric8.mockwebserver.ServerResponse;
import io.fabric8.mockwebserver.dsl.HttpMethod;
import io.fabric8.mockwebserver.http.MockResponse;
import io.fabric8.mockwebserver.http.RecordedRequest;
import io.fabric8.mockwebserver.internal.MockDispatcher;
import io.fabric8.mockwebserver.internal.SimpleRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * fabric8's CRUD dispatcher, plus what a real API server does and the stock mock does not: the pod
 * Eviction subresource (honouring PodDisruptionBudgets), field selectors on list requests and the
 * {@code /readyz} health endpoint.
 * Expectations recorded on the server ({@code server.expect()...}) still take precedence, as in
 * fabric8's mixed dispatcher.
 */
final class SandboxDispatcher extends KubernetesCrudDispatcher {
  private static final Logger log = LoggerFactory.getLogger(SandboxDispatcher.class);
  private static final Pattern EVICTION =
      Pattern.compile("/api/v1/namespaces/([^/]+)/pods/([^/?]+)/eviction/?(\\?.*)?");
  private static final Pattern READYZ = Pattern.compile("/readyz/?(\\?.*)?");
  private static final String TOKEN_REVIEWS = "/apis/authentication.k8s.io/v1/tokenreviews";
  private static final String ACCESS_REVIEWS = "/apis/authorization.k8s.io/v1/subjectaccessreviews";
  /** What a kube-apiserver prints for a failed {@code /readyz} (the checks abridged). */
  static final String NOT_READY_BODY =
      "[+]ping ok\n[+]log ok\n[-]etcd failed: reason withheld\n[+]informer-sync ok\n"
          + "readyz check failed\n";

  static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, false);

  private final Map<ServerRequest, Queue<ServerResponse>> responses;
  private final MockDispatcher expectations;
  private final Object evictionLock = new Object();
  private volatile boolean ready = true;
  /** Distinct requests (without paths) by the bearer token that made them. */
  private final Map<String, Set<ApiRequest>> requestsByToken = new ConcurrentHashMap<>();
  private final Store store =
      new Store() {
        @Override
        public <T> List<T> list(String path, Class<T> type) {
          return SandboxDispatcher.this.list(path, type);
        }

        @Override
        public <T> T get(String path, Class<T> type) {
          return SandboxDispatcher.this.get(path, type);
        }
      };

  SandboxDispatcher(Map<ServerRequest, Queue<ServerResponse>> responses) {
    this.responses = responses;
    this.expectations = new MockDispatcher(responses);
  }

  @Override
  public MockResponse dispatch(RecordedRequest request) {
    record(request);
    Queue<ServerResponse> expected =
        responses.get(new SimpleRequest(HttpMethod.valueOf(request.getMethod()), request.getPath()));
    if (expected != null && !expected.isEmpty()) {
      return expectations.dispatch(request);
    }
    String path = request.getPath();
    Matcher eviction = EVICTION.matcher(path);
    if (request.method() == HttpMethod.POST && eviction.matches()) {
      return evict(eviction.group(1), eviction.group(2));
    }
    if (request.method() == HttpMethod.GET && READYZ.matcher(path).matches()) {
      return readyz();
    }
    if (request.method() == HttpMethod.POST && (path.startsWith(TOKEN_REVIEWS) || path.startsWith(ACCESS_REVIEWS))) {
      try {
        String body = request.getUtf8Body();
        return new MockResponse().setResponseCode(201).setBody(path.startsWith(TOKEN_REVIEWS)
            ? AccessReviews.tokenReview(body) : AccessReviews.subjectAccessReview(body));
      } catch (java.io.IOException | RuntimeException e) {
        return status(badRequest("cannot read the review: " + e.getMessage()));
      }
    }
    if (request.method() == HttpMethod.GET) {
      FieldSelectedPath selected;
      try {
        selected = FieldSelectedPath.parse(path);
      } catch (IllegalArgumentException e) {
        return status(badRequest(e.getMessage()));
      }
      if (selected != null) {
        return fieldSelectedList(selected);
      }
    }
    return super.dispatch(request);
  }

  /** Who asked for what: RBAC-relevant fields of every request, by the caller's bearer token. */
  private void record(RecordedRequest request) {
    String authorization = request.getHeader("Authorization");
    String token = authorization != null && authorization.startsWith("Bearer ")
        ? authorization.substring("Bearer ".length()).trim()
        : "";
    requestsByToken
        .computeIfAbsent(token, t -> ConcurrentHashMap.newKeySet())
        .add(ApiRequest.of(request.getMethod(), request.getPath()).withoutPath());
  }

  /** The distinct requests made with this bearer token so far. */
  Set<ApiRequest> requestsBy(String token) {
    return Set.copyOf(requestsByToken.getOrDefault(token, Set.of()));
  }

  /** Whether {@code GET /readyz} answers 200 {@code ok} (true) or 500 with a failed check. */
  void setReady(boolean ready) {
    this.ready = ready;
  }

  private MockResponse readyz() {
    return new MockResponse()
        .setResponseCode(ready ? 200 : 500)
        .addHeader("Content-Type", "text/plain; charset=utf-8")
        .setBody(ready ? "ok" : NOT_READY_BODY);
  }

  @Override
  public void shutdown() {
    expectations.shutdown();
    super.shutdown();
  }

  // ---------------------------------------------------------------- field selectors

  /** A list GET (not a watch) carrying {@code fieldSelector}, and the path without it. */
  private record FieldSelectedPath(String pathWithoutSelector, List<FieldRequirement> requirements) {
    static FieldSelectedPath parse(String path) {
      int q = path.indexOf('?');
      if (q < 0) {
        return null;
      }
      List<String> kept = new ArrayList<>();
      String selector = null;
      for (String param : path.substring(q + 1).split("&")) {
        if (param.startsWith("fieldSelector=")) {
          selector = URLDecoder.decode(param.substring("fieldSelector=".length()), StandardCharsets.UTF_8);
        } else if (param.equals("watch=true") || param.equals("watch=1")) {
          return null; // watches keep the stock behaviour
        } else {
          kept.add(param);
        }
      }
      if (selector == null || selector.isBlank()) {
        return null;
      }
      String base = path.substring(0, q);
      return new FieldSelectedPath(
          kept.isEmpty() ? base : base + "?" + String.join("&", kept),
          FieldRequirement.parseAll(selector));
    }
  }

  /** {@code field=value}, {@code field==value} or {@code field!=value} on a dotted path. */
  record FieldRequirement(String field, String value, boolean equal) {
    static List<FieldRequirement> parseAll(String selector) {
      List<FieldRequirement> requirements = new ArrayList<>();
      for (String term : selector.split(",")) {
        int ne = term.indexOf("!=");
        if (ne >= 0) {
          requirements.add(new FieldRequirement(term.substring(0, ne).trim(), term.substring(ne + 2).trim(), false));
          continue;
        }
        int eq = term.indexOf('=');
        if (eq < 0) {
          throw new IllegalArgumentException("invalid field selector term '" + term + "'");
        }
        String value = term.substring(eq + 1);
        if (value.startsWith("=")) {
          value = value.substring(1);
        }
        requirements.add(new FieldRequirement(term.substring(0, eq).trim(), value.trim(), true));
      }
      return requirements;
    }

    boolean matches(JsonNode object) {
      JsonNode node = object;
      for (String part : field.split("\\.")) {
        node = node == null ? null : node.get(part);
      }
      String actual = node == null || node.isNull() ? "" : node.asText();
      return equal == actual.equals(value);
    }
  }

  private MockResponse fieldSelectedList(FieldSelectedPath selected) {
    List<FieldRequirement> requirements = selected.requirements();
    MockResponse list = super.handleGet(selected.pathWithoutSelector());
    if (list.code() != 200) {
      return list;
    }
    JsonNode body = read(list.getBody().getBytes());
    if (!(body instanceof ObjectNode object) || !(body.get("items") instanceof ArrayNode items)) {
      return list; // a single object or API discovery: nothing to filter
    }
    ArrayNode filtered = JSON.createArrayNode();
    items.forEach(
        item -> {
          if (requirements.stream().allMatch(r -> r.matches(item))) {
            filtered.add(item);
          }
        });
    object.set("items", filtered);
    return new MockResponse().setResponseCode(200).setBody(write(object));
  }

  // ---------------------------------------------------------------- evictions

  private MockResponse evict(String namespace, String name) {
    synchronized (evictionLock) {
      MockResponse found = super.handleGet(podPath(namespace, name));
      if (found.code() != 200) {
        return status(
            new StatusBuilder()
                .withStatus("Failure")
                .withReason("NotFound")
                .withMessage("pods \"" + name + "\" not found")
                .withNewDetails()
                .withName(name)
                .withKind("pods")
                .endDetails()
                .withCode(404)
                .build());
      }
      Pod pod = convert(read(found.getBody().getBytes()), Pod.class);
      DisruptionBudgets budgets = new DisruptionBudgets(store);
      DisruptionBudgets.Verdict verdict = budgets.evaluate(pod);
      if (verdict.allowed()) {
        super.handleDelete(podPath(namespace, name));
        log.debug("Evicted pod {}/{}", namespace, name);
        return status(new StatusBuilder().withStatus("Success").withCode(201).build());
      }
      log.debug("Refused eviction of pod {}/{}: {}", namespace, name, verdict);
      return status(verdict.refusal());
    }
  }

  private static String podPath(String namespace, String name) {
    return "/api/v1/namespaces/" + namespace + "/pods/" + name;
  }

  /** Items of a list path as typed objects (empty when the path answers anything else). */
  private <T> List<T> list(String path, Class<T> type) {
    MockResponse response = super.handleGet(path);
    if (response.code() != 200) {
      return List.of();
    }
    JsonNode items = read(response.getBody().getBytes()).get("items");
    List<T> result = new ArrayList<>();
    if (items != null) {
      items.forEach(item -> result.add(convert(item, type)));
    }
    return result;
  }

  /** A single object by path, or null. */
  <T> T get(String path, Class<T> type) {
    MockResponse response = super.handleGet(path);
    return response.code() == 200 ? convert(read(response.getBody().getBytes()), type) : null;
  }

  static Status badRequest(String message) {
    return new StatusBuilder()
        .withStatus("Failure")
        .withReason("BadRequest")
        .withMessage(message)
        .withCode(400)
        .build();
  }

  static MockResponse status(Status status) {
    status.setApiVersion("v1");
    status.setKind("Status");
    if (status.getMetadata() == null) {
      status.setMetadata(new ListMeta());
    }
    return new MockResponse()
        .setResponseCode(status.getCode())
        .addHeader("Content-Type", "application/json")
        .setBody(write(status));
  }

  static JsonNode read(byte[] json) {
    try {
      return JSON.readTree(json);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static <T> T convert(JsonNode json, Class<T> type) {
    try {
      return JSON.treeToValue(json, type);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static String write(Object value) {
    try {
      return JSON.writeValueAsString(value);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** Read access to the stored objects, by API path, without going through HTTP. */
  interface Store {
    <T> List<T> list(String path, Class<T> type);

    <T> T get(String path, Class<T> type);
  }
}
