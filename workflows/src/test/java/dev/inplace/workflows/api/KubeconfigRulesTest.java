package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/** The one kubeconfig allowlist the worker and the CLI share. */
class KubeconfigRulesTest {
  private static Map<String, Object> kubeconfig(Map<String, Object> user) {
    return Map.of("apiVersion", "v1", "kind", "Config",
        "clusters", List.of(Map.of("name", "c", "cluster", Map.of("server", "https://10.0.0.1:6443",
            "certificate-authority-data", "Y2E="))),
        "users", List.of(Map.of("name", "u", "user", user)),
        "contexts", List.of(Map.of("name", "x", "context", Map.of("cluster", "c", "user", "u"))),
        "current-context", "x");
  }

  @Test
  void inlineDataIsAccepted() {
    assertEquals(Optional.empty(), KubeconfigRules.problem(kubeconfig(Map.of("token", "t")), "the worker"));
  }

  @Test
  void anExecPluginIsRefusedNamingWhoWouldRunIt() {
    assertEquals(Optional.of("users[u].user.exec is not allowed (it runs a command in this CLI)"),
        KubeconfigRules.problem(kubeconfig(Map.of("exec", Map.of("command", "/bin/sh"))), "this CLI"));
  }

  @Test
  void aFilePathAndAnUnknownKeyAreRefusedAndNotADocumentIsSaid() {
    assertEquals(Optional.of("users[u].user.client-key is not allowed (it reads a file of the worker; use client-key-data)"
            + "; users[u].user.as is not allowed (only inline data is accepted)"),
        KubeconfigRules.problem(withTwo(), "the worker"));
    assertEquals(Optional.of("it is not a YAML mapping"), KubeconfigRules.problem(List.of("x"), "the worker"));
    assertEquals(Optional.of("users is not a list"),
        KubeconfigRules.problem(Map.of("users", Map.of("u", "x")), "the worker"));
  }

  private static Map<String, Object> withTwo() {
    java.util.LinkedHashMap<String, Object> user = new java.util.LinkedHashMap<>();
    user.put("client-key", "/k");
    user.put("as", "system:admin");
    return kubeconfig(user);
  }
}
