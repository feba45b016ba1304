package dev.inplace.starter;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;

/**
 * A workload cluster's kubeconfig from its CAPI Secret, checked before use: a Secret anyone with
 * write access to the namespace can edit must not make this process run a program ({@code exec},
 * {@code auth-provider}) or read local files ({@code tokenFile}, certificate paths). Inline data
 * and tokens only, as CAPI providers write them.
 */
final class WorkloadKubeconfig {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());
  private static final List<String> USER_REFUSED =
      List.of("exec", "auth-provider", "tokenFile", "client-certificate", "client-key", "username", "password");
  private static final List<String> CLUSTER_REFUSED = List.of("certificate-authority");

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
    refuse(root.path("users"), "user", USER_REFUSED, source);
    refuse(root.path("clusters"), "cluster", CLUSTER_REFUSED, source);
    try {
      return Config.fromKubeconfig(new String(kubeconfig, StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      // The parser's message may quote the document: report the type only.
      throw new Refused(source + " cannot be parsed (" + e.getClass().getSimpleName() + ")");
    }
  }

  private static void refuse(JsonNode entries, String field, List<String> refused, String source) {
    for (JsonNode entry : entries) {
      JsonNode body = entry.path(field);
      for (String key : refused) {
        if (body.has(key)) {
          throw new Refused(source + ": " + field + " '" + entry.path("name").asText("?") + "' uses '" + key
              + "', which is refused (inline credentials only)");
        }
      }
    }
  }

  /** The kubeconfig may not be used. */
  static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message);
    }
  }
}
