package dev.inplace.worker;

import dev.inplace.client.SearchAttributeRegistration;
import dev.inplace.client.TemporalSettings;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Consumer;
import java.util.stream.Stream;

/**
 * The worker's configuration, read once from the environment and validated fail-fast. Every key is
 * documented in docs/configuration.md.
 *
 * @param temporal how to reach Temporal, as the {@code temporal} CLI reads it (address required)
 * @param taskQueue task queue the worker polls
 * @param artifactCache directory where artifacts are fetched once and verified
 * @param kubeconfig kubeconfig of the management cluster; empty means in-cluster or ~/.kube/config
 * @param httpBindAddress address of the /metrics, /healthz and /readyz server
 * @param httpPort its port
 * @param metricsAuthentication whether /metrics asks the management API server who the caller is
 *     (TokenReview and SubjectAccessReview); off only with {@code INPLACE_METRICS_AUTH=none}
 * @param searchAttributes whether the worker registers its search attributes or only checks them
 *     ({@code INPLACE_TEMPORAL_REGISTER_SEARCH_ATTRIBUTES}: auto checks on Temporal Cloud)
 */
public record WorkerConfig(
    TemporalSettings temporal,
    String taskQueue,
    Path artifactCache,
    Optional<Path> kubeconfig,
    String httpBindAddress,
    int httpPort,
    boolean metricsAuthentication,
    SearchAttributeRegistration.Mode searchAttributes) {

  /** The frontend address variable (read by {@link TemporalSettings}); named in usage and errors. */
  public static final String TEMPORAL_ADDRESS = TemporalSettings.ADDRESS;
  public static final String TEMPORAL_API_KEY = TemporalSettings.API_KEY;
  public static final String TASK_QUEUE = "INPLACE_TASK_QUEUE";
  public static final String ARTIFACT_CACHE = "INPLACE_ARTIFACT_CACHE";
  public static final String KUBECONFIG = "KUBECONFIG";
  public static final String HTTP_BIND_ADDRESS = "INPLACE_HTTP_BIND_ADDRESS";
  public static final String HTTP_PORT = "INPLACE_HTTP_PORT";
  public static final String METRICS_AUTH = "INPLACE_METRICS_AUTH";
  public static final String REGISTER_SEARCH_ATTRIBUTES = SearchAttributeRegistration.SETTING;

  /** Every key this record reads; docs/configuration.md must list each (a test checks). */
  public static final List<String> KEYS =
      Stream.concat(TemporalSettings.KEYS.stream(), Stream.of(TASK_QUEUE, ARTIFACT_CACHE, KUBECONFIG, HTTP_BIND_ADDRESS, HTTP_PORT,
          METRICS_AUTH, REGISTER_SEARCH_ATTRIBUTES)).toList();

  /** Reads and validates the configuration; collects every problem into one message. */
  public static WorkerConfig fromEnvironment(Map<String, String> env, Consumer<String> warnings) {
    List<String> problems = new ArrayList<>();
    TemporalSettings temporal = null;
    try {
      temporal = TemporalSettings.fromEnvironment(env, warnings);
      if (temporal.address().isEmpty()) {
        problems.add(TemporalSettings.ADDRESS + " is not set: give the Temporal frontend as host:port"
            + " (or an address in the temporal CLI's profile file)");
      }
    } catch (IllegalArgumentException e) {
      problems.add(e.getMessage());
    }
    Optional<Path> kubeconfig = nonBlank(env, KUBECONFIG).map(Path::of);
    kubeconfig.filter(p -> !p.toFile().isFile()).ifPresent(p -> problems.add(KUBECONFIG + ": no file " + p));
    String taskQueue = nonBlank(env, TASK_QUEUE).orElse(dev.inplace.workflows.api.WorkflowIds.TASK_QUEUE);
    Path cache =
        nonBlank(env, ARTIFACT_CACHE)
            .map(Path::of)
            .orElse(Path.of(System.getProperty("user.home"), ".cache", "inplace", "artifacts"));
    String httpBind = nonBlank(env, HTTP_BIND_ADDRESS).orElse("0.0.0.0");
    int httpPort = 8080;
    Optional<String> port = nonBlank(env, HTTP_PORT);
    if (port.isPresent()) {
      try {
        httpPort = Integer.parseInt(port.get());
        if (httpPort < 0 || httpPort > 65535) {
          problems.add(HTTP_PORT + " must be a port (0-65535), got '" + port.get() + "'");
        }
      } catch (NumberFormatException e) {
        problems.add(HTTP_PORT + " must be a port (0-65535), got '" + port.get() + "'");
      }
    }
    String metricsAuth = nonBlank(env, METRICS_AUTH).orElse("kubernetes");
    if (!metricsAuth.equals("kubernetes") && !metricsAuth.equals("none")) {
      problems.add(METRICS_AUTH + " must be kubernetes or none, got '" + metricsAuth + "'");
    }
    SearchAttributeRegistration.Mode searchAttributes = null;
    try {
      searchAttributes = SearchAttributeRegistration.Mode.fromSetting(
          env.get(REGISTER_SEARCH_ATTRIBUTES), temporal == null ? java.util.Optional.empty() : temporal.address());
    } catch (IllegalArgumentException e) {
      problems.add(e.getMessage());
    }
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid worker configuration: " + String.join("; ", problems));
    }
    return new WorkerConfig(
        temporal, taskQueue, cache, kubeconfig, httpBind, httpPort, metricsAuth.equals("kubernetes"), searchAttributes);
  }

  private static Optional<String> nonBlank(Map<String, String> env, String key) {
    String v = env.get(key);
    return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.trim());
  }

  @Override
  public String toString() {
    // TemporalSettings never prints the API key.
    return "WorkerConfig[temporal: " + temporal + ", taskQueue=" + taskQueue
        + ", artifactCache=" + artifactCache + ", kubeconfig=" + kubeconfig.map(Path::toString).orElse("(default)")
        + ", http=" + httpBindAddress + ":" + httpPort + ", metricsAuthentication=" + metricsAuthentication
        + ", searchAttributes=" + searchAttributes.name().toLowerCase(java.util.Locale.ROOT) + "]";
  }
}
