package dev.inplace.starter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Set;

/**
 * A workload cluster's kubeconfig from its CAPI Secret, checked before fabric8 parses it: a Secret
 * anyone with write access to the namespace can edit must not make this process run a program
 * ({@code exec}, {@code auth-provider}) or read local files ({@code tokenFile}, certificate paths).
 * The same allowlist as the worker's {@code KubeconfigGuard} (activities, which starter may not
 * depend on): inline data only, so a form added to kubeconfig later is refused until someone looks.
 * Messages name the key, never a value.
 */
final class WorkloadKubeconfig {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Set<String> TOP =
      Set.of("apiVersion", "kind", "clusters", "contexts", "users", "current-context", "preferences");
  private static final Set<String> CLUSTER = Set.of(
      "server", "certificate-authority-data", "tls-server-name", "insecure-skip-tls-verify", "disable-compression");
  private static final Set<String> USER =
      Set.of("client-certificate-data", "client-key-data", "token", "username", "password");
  private static final Set<String> CONTEXT = Set.of("cluster", "user", "namespace");

  private WorkloadKubeconfig() {}

  /** The client config of {@code kubeconfig}, or a {@link Refused} naming what was refused (never the content). */
  static Config parse(byte[] kubeconfig, String source) {
    JsonNode root;
    try {
      root = YAML.readTree(kubeconfig);
    } catch (IOException e) {
      throw new Refused(source + " is not YAML (" + e.getClass().getSimpleName() + ")");
    }
    if (root == null || !root.isObject()) {
      throw new Refused(source + " is not a kubeconfig document");
    }
    List<String> problems = new ArrayList<>();
    keys(root, TOP, "", problems);
    entries(root, "clusters", "cluster", CLUSTER, problems);
    entries(root, "users", "user", USER, problems);
    entries(root, "contexts", "context", CONTEXT, problems);
    if (!problems.isEmpty()) {
      throw new Refused(source + ": " + String.join("; ", problems));
    }
    try {
      return Config.fromKubeconfig(new String(kubeconfig, StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      // The parser's message may quote the document: report the type only.
      throw new Refused(source + " cannot be parsed (" + e.getClass().getSimpleName() + ")");
    }
  }

  private static void entries(JsonNode root, String list, String field, Set<String> allowed, List<String> problems) {
    JsonNode items = root.path(list);
    if (items.isMissingNode() || items.isNull()) {
      return;
    }
    if (!items.isArray()) {
      problems.add(list + " is not a list");
      return;
    }
    for (JsonNode item : items) {
      String name = item.path("name").asText("?");
      JsonNode body = item.path(field);
      if (!body.isObject()) {
        problems.add(list + "[" + name + "] has no " + field);
        continue;
      }
      keys(body, allowed, list + "[" + name + "]." + field + ".", problems);
    }
  }

  private static void keys(JsonNode object, Set<String> allowed, String prefix, List<String> problems) {
    for (Iterator<String> it = object.fieldNames(); it.hasNext(); ) {
      String key = it.next();
      if (!allowed.contains(key)) {
        problems.add(prefix + key + " is not allowed (" + why(key) + ")");
      }
    }
  }

  private static String why(String key) {
    return switch (key) {
      case "exec" -> "it would run a command";
      case "auth-provider" -> "it would run an auth plugin";
      case "tokenFile" -> "it would read a local file";
      case "client-certificate", "client-key", "certificate-authority" -> "it would read a local file; use " + key + "-data";
      default -> "only inline data is accepted";
    };
  }

  /** The kubeconfig may not be used. */
  static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message);
    }
  }
}
