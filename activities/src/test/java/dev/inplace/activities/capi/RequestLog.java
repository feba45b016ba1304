package dev.inplace.activities.capi;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.http.BasicBuilder;
import io.fabric8.kubernetes.client.http.HttpRequest;
import io.fabric8.kubernetes.client.http.Interceptor;
import io.fabric8.kubernetes.client.http.StandardHttpRequest;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Records every request a client sends, as sent (the mock server consumes request bodies while it
 * dispatches them, so its own record has none).
 */
final class RequestLog implements Interceptor {
  private static final ObjectMapper JSON = new ObjectMapper();

  record Sent(String method, String path, String contentType, String body) {}

  private final List<Sent> sent = new ArrayList<>();

  /** A client like {@code base} (same server and settings) whose requests land in this log. */
  KubernetesClient client(KubernetesClient base) {
    return new KubernetesClientBuilder()
        .withConfig(base.getConfiguration())
        .withHttpClientBuilderConsumer(b -> b.addOrReplaceInterceptor("request-log", this))
        .build();
  }

  @Override
  public synchronized void before(BasicBuilder builder, HttpRequest request, RequestTags tags) {
    sent.add(
        new Sent(
            request.method(),
            request.uri().getRawPath(),
            request instanceof StandardHttpRequest standard
                ? standard.getContentType()
                : request.header("Content-Type"),
            request.bodyString()));
  }

  /** The requests sent since the last call, oldest first. */
  synchronized List<Sent> take() {
    List<Sent> taken = List.copyOf(sent);
    sent.clear();
    return taken;
  }

  /**
   * The PATCH requests sent since the last call, each as {@code PATCH <path> <body>}; a body
   * guarded by {@code metadata.resourceVersion} reads {@code PATCH <path> if-unchanged <body
   * without it>}. Fails unless each is a JSON merge patch.
   */
  List<String> patches() {
    return patches(take());
  }

  /** {@link #patches()} of the given requests. */
  static List<String> patches(List<Sent> requests) {
    List<String> patches = new ArrayList<>();
    for (Sent request : requests) {
      if (!"PATCH".equals(request.method())) {
        continue;
      }
      if (request.contentType() == null
          || !request.contentType().startsWith("application/merge-patch+json")) {
        throw new AssertionError(
            "not a JSON merge patch: " + request.contentType() + " " + request.path());
      }
      ObjectNode body = body(request);
      boolean guarded = body.path("metadata").has("resourceVersion");
      if (guarded) {
        ((ObjectNode) body.get("metadata")).remove("resourceVersion");
      }
      patches.add("PATCH " + request.path() + (guarded ? " if-unchanged " : " ") + body.toString());
    }
    return patches;
  }

  /** The {@code metadata.resourceVersion} a request's body carries, or null. */
  static String guard(Sent request) {
    return body(request).path("metadata").path("resourceVersion").asText(null);
  }

  private static ObjectNode body(Sent request) {
    try {
      return (ObjectNode) JSON.readTree(request.body());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
