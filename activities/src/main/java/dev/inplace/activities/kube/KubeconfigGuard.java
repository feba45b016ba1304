package dev.inplace.activities.kube;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import dev.inplace.workflows.api.KubeconfigRules;
import java.io.IOException;
import java.util.Optional;

/**
 * Checks a workload kubeconfig before fabric8 parses it, with the allowlist the CLI uses too
 * ({@link KubeconfigRules}: inline data only; fabric8 would run exec plugins and read the files a
 * kubeconfig names inside the worker). Messages name the key, never a value.
 */
public final class KubeconfigGuard {
  private static final ObjectMapper YAML = new ObjectMapper(new YAMLFactory());

  private KubeconfigGuard() {}

  /** Why this kubeconfig is refused, if it is. */
  public static Optional<String> problem(String kubeconfig) {
    Object document;
    try {
      document = YAML.readValue(kubeconfig, Object.class);
    } catch (IOException e) {
      return Optional.of("it is not YAML");
    }
    return KubeconfigRules.problem(document, "the worker");
  }
}
