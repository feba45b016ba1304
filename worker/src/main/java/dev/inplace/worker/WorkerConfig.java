package dev.inplace.worker;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The worker's configuration, read once from the environment and validated fail-fast. Every key is
 * documented in docs/configuration.md.
 *
 * @param temporalAddress {@code host:port} of a Temporal frontend; required (the in-process test
 *     server is the sandbox's, never the worker's)
 * @param temporalNamespace Temporal namespace
 * @param taskQueue task queue the worker polls
 * @param temporalApiKey API key for Temporal Cloud (sent over TLS); never logged
 * @param temporalTlsCert client certificate (PEM file) for mTLS to Temporal
 * @param temporalTlsKey client key (PKCS#8 PEM file) for mTLS to Temporal
 * @param artifactCache directory where artifacts are fetched once and verified
 * @param kubeconfig kubeconfig of the management cluster; empty means in-cluster or ~/.kube/config
 */
public record WorkerConfig(
    String temporalAddress,
    String temporalNamespace,
    String taskQueue,
    Optional<String> temporalApiKey,
    Optional<Path> temporalTlsCert,
    Optional<Path> temporalTlsKey,
    Path artifactCache,
    Optional<Path> kubeconfig) {

  public static final String TEMPORAL_ADDRESS = "TEMPORAL_ADDRESS";
  public static final String TEMPORAL_NAMESPACE = "TEMPORAL_NAMESPACE";
  public static final String TEMPORAL_API_KEY = "TEMPORAL_API_KEY";
  public static final String TEMPORAL_TLS_CERT = "TEMPORAL_TLS_CERT";
  public static final String TEMPORAL_TLS_KEY = "TEMPORAL_TLS_KEY";
  public static final String TASK_QUEUE = "INPLACE_TASK_QUEUE";
  public static final String ARTIFACT_CACHE = "INPLACE_ARTIFACT_CACHE";
  public static final String KUBECONFIG = "KUBECONFIG";

  /** Every key this record reads; docs/configuration.md must list each (a test checks). */
  public static final List<String> KEYS =
      List.of(
          TEMPORAL_ADDRESS,
          TEMPORAL_NAMESPACE,
          TEMPORAL_API_KEY,
          TEMPORAL_TLS_CERT,
          TEMPORAL_TLS_KEY,
          TASK_QUEUE,
          ARTIFACT_CACHE,
          KUBECONFIG);

  /** Reads and validates the configuration; collects every problem into one message. */
  public static WorkerConfig fromEnvironment(Map<String, String> env) {
    List<String> problems = new ArrayList<>();
    Optional<String> address = nonBlank(env, TEMPORAL_ADDRESS);
    if (address.isEmpty()) {
      problems.add(TEMPORAL_ADDRESS + " is not set: give the Temporal frontend as host:port");
    }
    address.ifPresent(
        a -> {
          if (!a.matches("[A-Za-z0-9.\\-\\[\\]:]+:\\d{1,5}")) {
            problems.add(TEMPORAL_ADDRESS + " must be host:port, got '" + a + "'");
          }
        });
    Optional<Path> cert = nonBlank(env, TEMPORAL_TLS_CERT).map(Path::of);
    Optional<Path> key = nonBlank(env, TEMPORAL_TLS_KEY).map(Path::of);
    if (cert.isPresent() != key.isPresent()) {
      problems.add(TEMPORAL_TLS_CERT + " and " + TEMPORAL_TLS_KEY + " must be set together");
    }
    cert.filter(p -> !p.toFile().isFile()).ifPresent(p -> problems.add(TEMPORAL_TLS_CERT + ": no file " + p));
    key.filter(p -> !p.toFile().isFile()).ifPresent(p -> problems.add(TEMPORAL_TLS_KEY + ": no file " + p));
    Optional<String> apiKey = nonBlank(env, TEMPORAL_API_KEY);
    Optional<Path> kubeconfig = nonBlank(env, KUBECONFIG).map(Path::of);
    kubeconfig.filter(p -> !p.toFile().isFile()).ifPresent(p -> problems.add(KUBECONFIG + ": no file " + p));
    String taskQueue = nonBlank(env, TASK_QUEUE).orElse(dev.inplace.workflows.api.WorkflowIds.TASK_QUEUE);
    Path cache =
        nonBlank(env, ARTIFACT_CACHE)
            .map(Path::of)
            .orElse(Path.of(System.getProperty("user.home"), ".cache", "inplace", "artifacts"));
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid worker configuration: " + String.join("; ", problems));
    }
    return new WorkerConfig(
        address.get(),
        nonBlank(env, TEMPORAL_NAMESPACE).orElse("default"),
        taskQueue,
        apiKey,
        cert,
        key,
        cache,
        kubeconfig);
  }

  private static Optional<String> nonBlank(Map<String, String> env, String key) {
    String v = env.get(key);
    return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.trim());
  }

  @Override
  public String toString() {
    // The API key is a secret: never printed.
    return "WorkerConfig[temporalAddress=" + temporalAddress
        + ", namespace=" + temporalNamespace + ", taskQueue=" + taskQueue
        + ", apiKey=" + (temporalApiKey.isPresent() ? "(set)" : "(none)")
        + ", tls=" + (temporalTlsCert.isPresent() ? "mTLS" : "none")
        + ", artifactCache=" + artifactCache + ", kubeconfig=" + kubeconfig.map(Path::toString).orElse("(default)") + "]";
  }
}
