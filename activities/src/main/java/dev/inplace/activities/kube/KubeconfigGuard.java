package dev.inplace.activities.kube;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;

/**
 * Checks a workload kubeconfig before fabric8 parses it: only inline data. fabric8 runs
 * {@code users[].user.exec} commands and reads every file a kubeconfig names, so whoever can write
 * {@code <cluster>-kubeconfig} could otherwise run code in the worker, or make it read (and send as
 * credentials) its own files. An allowlist of keys, so a form added to kubeconfig later is refused
 * until someone looks at it. Messages name the key, never a value.
 */
public final class KubeconfigGuard {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final Set<String> TOP =
      Set.of("apiVersion", "kind", "clusters", "contexts", "users", "current-context", "preferences");
  private static final Set<String> CLUSTER = Set.of(
      "server", "certificate-authority-data", "tls-server-name", "insecure-skip-tls-verify", "disable-compression");
  private static final Set<String> USER = Set.of("client-certificate-data", "client-key-data", "token", "username",
      "password");
  private static final Set<String> CONTEXT = Set.of("cluster", "user", "namespace");

  private KubeconfigGuard() {}

  /** Why this kubeconfig is refused, if it is. */
  public static Optional<String> problem(String kubeconfig) {
    JsonNode root;
    try {
      root = YAML.readTree(kubeconfig);
    } catch (IOException e) {
      return Optional.of("it is not YAML");
    }
    if (root == null || !root.isObject()) {
      return Optional.of("it is not a YAML mapping");
    }
    List<String> problems = new ArrayList<>();
    keys(root, TOP, "", problems);
    entries(root, "clusters", "cluster", CLUSTER, problems);
    entries(root, "users", "user", USER, problems);
    entries(root, "contexts", "context", CONTEXT, problems);
    return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
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
      case "exec" -> "it runs a command in the worker";
      case "auth-provider" -> "it runs an auth plugin in the worker";
      case "tokenFile" -> "it reads a file of the worker";
      case "client-certificate", "client-key", "certificate-authority" ->
          "it reads a file of the worker; use " + key + "-data";
      default -> "only inline data is accepted";
    };
  }
}
