package dev.inplace.starter;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.inplace.workflows.api.KubeconfigRules;
import io.fabric8.kubernetes.client.Config;
import java.io.IOException;
import java.nio.charset.StandardCharsets;

/**
 * A workload cluster's kubeconfig from its CAPI Secret, checked before fabric8 parses it: a Secret
 * anyone with write access to the namespace can edit must not make this process run a program
 * ({@code exec}, {@code auth-provider}) or read local files ({@code tokenFile}, certificate paths).
 * The allowlist is the worker's ({@link KubeconfigRules}): inline data only. Messages name the key,
 * never a value.
 */
final class WorkloadKubeconfig {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private WorkloadKubeconfig() {}

  /** How long a request to a workload cluster may take. */
  static final int TIMEOUT_MILLIS = 10_000;

  /**
   * The client config of {@code cluster}'s workload cluster, from its CAPI Secret {@code
   * <cluster>-kubeconfig} (data key {@code value}) in the management cluster, without retries and
   * with {@link #TIMEOUT_MILLIS}; a {@link Refused} naming the Secret when it is missing or refused.
   */
  static Config fromSecret(io.fabric8.kubernetes.client.KubernetesClient management, String namespace, String cluster) {
    String secretName = cluster + "-kubeconfig";
    io.fabric8.kubernetes.api.model.Secret secret = management.secrets().inNamespace(namespace).withName(secretName).get();
    String source = "Secret " + namespace + "/" + secretName;
    if (secret == null || secret.getData() == null || secret.getData().get("value") == null) {
      throw new Refused(source + " not found or has no data key 'value'");
    }
    byte[] kubeconfig;
    try {
      kubeconfig = java.util.Base64.getDecoder().decode(secret.getData().get("value"));
    } catch (IllegalArgumentException e) {
      throw new Refused(source + " data key 'value' is not base64");
    }
    Config config = parse(kubeconfig, source);
    config.setRequestRetryBackoffLimit(0);
    config.setConnectionTimeout(TIMEOUT_MILLIS);
    config.setRequestTimeout(TIMEOUT_MILLIS);
    return config;
  }

  /** The client config of {@code kubeconfig}, or a {@link Refused} naming what was refused (never the content). */
  static Config parse(byte[] kubeconfig, String source) {
    Object document;
    try {
      document = YAML.readValue(kubeconfig, Object.class);
    } catch (IOException e) {
      throw new Refused(source + " is not YAML (" + e.getClass().getSimpleName() + ")");
    }
    if (!(document instanceof java.util.Map<?, ?>)) {
      throw new Refused(source + " is not a kubeconfig document");
    }
    KubeconfigRules.problem(document, "this CLI").ifPresent(problem -> {
      throw new Refused(source + ": " + problem);
    });
    try {
      return Config.fromKubeconfig(new String(kubeconfig, StandardCharsets.UTF_8));
    } catch (RuntimeException e) {
      // The parser's message may quote the document: report the type only.
      throw new Refused(source + " cannot be parsed (" + e.getClass().getSimpleName() + ")");
    }
  }

  /** The kubeconfig may not be used. */
  static final class Refused extends RuntimeException {
    Refused(String message) {
      super(message);
    }
  }
}
