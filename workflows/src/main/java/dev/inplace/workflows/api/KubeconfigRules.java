package dev.inplace.workflows.api;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The one allowlist for a workload kubeconfig read from a CAPI Secret, used by the worker ({@code
 * KubeconfigGuard}) and the CLI ({@code WorkloadKubeconfig}) before fabric8 parses it: inline data
 * only. fabric8 runs {@code users[].user.exec} commands and reads every file a kubeconfig names, so
 * whoever can write {@code <cluster>-kubeconfig} could otherwise run code in the reading process or
 * make it read (and send as credentials) its own files. An allowlist of keys, so a form added to
 * kubeconfig later is refused until someone looks at it. Works on the parsed document (maps and
 * lists, as a JSON/YAML parser gives them), so it needs no parser here; messages name the key,
 * never a value.
 */
public final class KubeconfigRules {
  private static final Set<String> TOP =
      Set.of("apiVersion", "kind", "clusters", "contexts", "users", "current-context", "preferences");
  private static final Set<String> CLUSTER = Set.of(
      "server", "certificate-authority-data", "tls-server-name", "insecure-skip-tls-verify", "disable-compression");
  private static final Set<String> USER =
      Set.of("client-certificate-data", "client-key-data", "token", "username", "password");
  private static final Set<String> CONTEXT = Set.of("cluster", "user", "namespace");

  private KubeconfigRules() {}

  /**
   * Why {@code document} (the parsed kubeconfig) is refused, if it is.
   *
   * @param reader who would run or read what the kubeconfig names, for the message: "the worker"
   */
  public static Optional<String> problem(Object document, String reader) {
    if (!(document instanceof Map<?, ?> root)) {
      return Optional.of("it is not a YAML mapping");
    }
    List<String> problems = new ArrayList<>();
    keys(root, TOP, "", reader, problems);
    entries(root, "clusters", "cluster", CLUSTER, reader, problems);
    entries(root, "users", "user", USER, reader, problems);
    entries(root, "contexts", "context", CONTEXT, reader, problems);
    return problems.isEmpty() ? Optional.empty() : Optional.of(String.join("; ", problems));
  }

  private static void entries(
      Map<?, ?> root, String list, String field, Set<String> allowed, String reader, List<String> problems) {
    Object items = root.get(list);
    if (items == null) {
      return;
    }
    if (!(items instanceof List<?> entries)) {
      problems.add(list + " is not a list");
      return;
    }
    for (Object item : entries) {
      Object name = item instanceof Map<?, ?> m ? m.get("name") : null;
      String label = list + "[" + (name == null ? "?" : name) + "]";
      Object body = item instanceof Map<?, ?> m ? m.get(field) : null;
      if (!(body instanceof Map<?, ?> object)) {
        problems.add(label + " has no " + field);
        continue;
      }
      keys(object, allowed, label + "." + field + ".", reader, problems);
    }
  }

  private static void keys(Map<?, ?> object, Set<String> allowed, String prefix, String reader, List<String> problems) {
    for (Object key : object.keySet()) {
      if (!allowed.contains(String.valueOf(key))) {
        problems.add(prefix + key + " is not allowed (" + why(String.valueOf(key), reader) + ")");
      }
    }
  }

  private static String why(String key, String reader) {
    return switch (key) {
      case "exec" -> "it runs a command in " + reader;
      case "auth-provider" -> "it runs an auth plugin in " + reader;
      case "tokenFile" -> "it reads a file of " + reader;
      case "client-certificate", "client-key", "certificate-authority" ->
          "it reads a file of " + reader + "; use " + key + "-data";
      default -> "only inline data is accepted";
    };
  }
}
