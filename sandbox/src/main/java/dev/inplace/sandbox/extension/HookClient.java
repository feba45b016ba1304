package dev.inplace.sandbox.extension;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import javax.net.ssl.SSLContext;

/**
 * CAPI's Runtime SDK client, as far as the demo needs it: discovery first (validated as CAPI does),
 * then each hook at {@code <base><prefix>/<group>/<version>/<lower(hook)>/<handler>?timeout=Ns}, POST,
 * no Content-Type, 200 required, response decoded without looking at apiVersion/kind.
 */
final class HookClient {
  static final String GROUP_VERSION = "hooks.runtime.cluster.x-k8s.io/v1alpha1";
  /** The in-place hooks, which this simulator calls and requires. */
  private static final Set<String> IN_PLACE_HOOKS = Set.of("CanUpdateMachine", "CanUpdateMachineSet", "UpdateMachine");
  /**
   * Every hook a discovery answer may name: the in-place ones and the topology controller's
   * GenerateUpgradePlan (validated like the others; this simulator has no topology controller to call it).
   */
  private static final Set<String> KNOWN_HOOKS = Set.of("CanUpdateMachine", "CanUpdateMachineSet", "UpdateMachine", "GenerateUpgradePlan");
  private static final ObjectMapper JSON = new ObjectMapper();

  private record Handler(String name, int timeoutSeconds, String failurePolicy) {}

  private final HttpClient http;
  private final String base;
  private final Map<String, Handler> handlers = new HashMap<>();

  HookClient(SSLContext tls, int port, String pathPrefix) {
    this.http = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(tls)
        .connectTimeout(Duration.ofSeconds(5)).followRedirects(HttpClient.Redirect.NEVER).build();
    this.base = "https://localhost:" + port + pathPrefix;
  }

  /** Discovery (fixed 10 s timeout), validated like {@code defaultAndValidateDiscoveryResponse}. */
  void discover() {
    JsonNode response = post("/" + GROUP_VERSION + "/discovery", JSON.createObjectNode()
        .put("apiVersion", GROUP_VERSION).put("kind", "DiscoveryRequest"), 10);
    if (!"Success".equals(response.path("status").asText())) {
      throw new IllegalStateException("discovery failed: " + response);
    }
    Set<String> names = new HashSet<>();
    for (JsonNode h : response.path("handlers")) {
      String name = h.path("name").asText();
      String hook = h.path("requestHook").path("hook").asText();
      int timeout = h.path("timeoutSeconds").asInt(10);
      String policy = h.path("failurePolicy").asText("Fail");
      if (!name.matches("[a-z0-9]([-a-z0-9]*[a-z0-9])?") || !names.add(name)) {
        throw new IllegalStateException("handler name '" + name + "' is not a unique DNS-1123 label");
      }
      if (timeout < 0 || timeout > 30 || !(policy.equals("Fail") || policy.equals("Ignore"))
          || !GROUP_VERSION.equals(h.path("requestHook").path("apiVersion").asText()) || !KNOWN_HOOKS.contains(hook)) {
        throw new IllegalStateException("invalid handler " + h);
      }
      handlers.put(hook, new Handler(name, timeout, policy));
    }
    for (String hook : IN_PLACE_HOOKS) {
      if (!handlers.containsKey(hook)) {
        throw new IllegalStateException("the extension serves no " + hook + " handler");
      }
      if (!handlers.get(hook).failurePolicy().equals("Fail")) {
        throw new IllegalStateException(hook + " must declare failurePolicy Fail");
      }
    }
  }

  /** Calls a hook; a non-200 answer or an unreadable body is an error (failurePolicy Fail). */
  JsonNode call(String hook, ObjectNode request) {
    Handler handler = handlers.get(hook);
    if (handler == null) {
      throw new IllegalStateException("no handler discovered for " + hook);
    }
    request.put("apiVersion", GROUP_VERSION).put("kind", hook + "Request");
    JsonNode response = post("/" + GROUP_VERSION + "/" + hook.toLowerCase(Locale.ROOT) + "/" + handler.name(),
        request, handler.timeoutSeconds() == 0 ? 10 : handler.timeoutSeconds());
    String status = response.path("status").asText();
    if (!status.equals("Success") && !status.equals("Failure")) {
      throw new IllegalStateException(hook + " answered an unknown status '" + status + "'");
    }
    return response;
  }

  private JsonNode post(String path, JsonNode body, int timeoutSeconds) {
    HttpRequest request = HttpRequest.newBuilder(URI.create(base + path + "?timeout=" + timeoutSeconds + "s"))
        .POST(HttpRequest.BodyPublishers.ofString(body.toString()))
        .timeout(Duration.ofSeconds(timeoutSeconds))
        .build();
    try {
      HttpResponse<String> response = http.send(request, HttpResponse.BodyHandlers.ofString());
      if (response.statusCode() != 200) {
        String text = response.body();
        throw new IllegalStateException("HTTP " + response.statusCode() + " from " + path + ": "
            + text.substring(0, Math.min(512, text.length())));
      }
      return JSON.readTree(response.body());
    } catch (IOException e) {
      throw new IllegalStateException("calling " + path + ": " + e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted calling " + path, e);
    }
  }
}
