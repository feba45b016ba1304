package dev.inplace.starter;

import dev.inplace.client.TemporalConnection;
import dev.inplace.client.TemporalSettings;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.client.WorkflowClient;
import java.io.PrintStream;
import java.net.http.HttpClient;
import java.time.Duration;
import java.util.Map;
import java.util.function.Function;
import java.util.function.Supplier;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;

/**
 * What every command shares: where to print, and a Temporal client made on first use, so help and
 * usage errors never touch the network. All connection settings are read here.
 */
final class CliContext implements AutoCloseable {
  /** How long a command waits for the Temporal frontend before it exits 3. */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(10);

  final PrintStream out;
  final String taskQueue;
  final long pollMillis;
  private final Supplier<WorkflowClient> connector;
  private WorkflowClient client;
  private Runnable closer = () -> {};
  /** The management cluster for read-only views, from a kubeconfig path (null: KUBECONFIG, then ~/.kube/config). */
  private Function<String, KubernetesClient> kubernetesConnector = CliContext::operatorKubeconfig;
  private KubernetesClient kubernetes;
  /** Asks the operator at the terminal: the answer, or empty when there is no terminal (tests: a scripted one). */
  private Function<String, java.util.Optional<String>> terminal = CliContext::console;
  /** Reads release files over https ({@code catalogue add}); follows no redirect of its own. */
  private HttpClient http;

  CliContext(PrintStream out, String taskQueue, long pollMillis, Supplier<WorkflowClient> connector) {
    this.out = out;
    this.taskQueue = taskQueue;
    this.pollMillis = pollMillis;
    this.connector = connector;
  }

  /** A context on an existing client (tests, or a process that already holds one). */
  static CliContext of(WorkflowClient client, String taskQueue, PrintStream out, long pollMillis) {
    return new CliContext(out, taskQueue, pollMillis, () -> client);
  }

  /**
   * A context that connects when a command first needs Temporal, with the temporal CLI's settings
   * (environment, or its profile file); warnings about them go to {@code err}.
   */
  static CliContext fromEnvironment(Map<String, String> env, PrintStream out, PrintStream err) {
    String taskQueue = env.getOrDefault("INPLACE_TASK_QUEUE", WorkflowIds.TASK_QUEUE);
    CliContext[] self = new CliContext[1];
    self[0] = new CliContext(out, taskQueue, 1000, () -> {
      TemporalSettings settings;
      try {
        settings = TemporalSettings.fromEnvironment(env, warning -> err.println("inplace: warning: " + warning));
        settings.stubsOptions(); // reads the TLS files now: a bad one is a usage error, not a crash
      } catch (IllegalArgumentException e) {
        throw new CliException(e.getMessage());
      }
      String address = settings.address().orElseThrow(() -> new CliException(
          "set TEMPORAL_ADDRESS to the Temporal frontend (host:port) the worker uses,"
              + " or an address in the temporal CLI's profile file"));
      TemporalConnection temporal;
      try {
        temporal = TemporalConnection.connect(settings);
      } catch (RuntimeException e) {
        throw new CannotConnectException("cannot connect to Temporal at " + address + ": " + e.getMessage(), e);
      }
      self[0].closer = temporal::close;
      try {
        // The stubs connect lazily: check now, so an unreachable frontend is exit 3, not a hang.
        temporal.service().connect(CONNECT_TIMEOUT);
      } catch (RuntimeException e) {
        throw new CannotConnectException("cannot connect to Temporal at " + address + ": " + CliErrors.rootMessage(e), e);
      }
      return temporal.client();
    });
    return self[0];
  }

  WorkflowClient client() {
    if (client == null) {
      client = connector.get();
    }
    return client;
  }

  /** Views read the management cluster through this connector instead (tests: the mock API server). */
  CliContext withKubernetes(Function<String, KubernetesClient> connector) {
    this.kubernetesConnector = connector;
    return this;
  }

  /** Questions go to {@code terminal} instead of the console (tests). */
  CliContext withTerminal(Function<String, java.util.Optional<String>> terminal) {
    this.terminal = terminal;
    return this;
  }

  /** The operator's answer to {@code prompt} at the terminal; empty when the CLI does not run at one. */
  java.util.Optional<String> ask(String prompt) {
    return terminal.apply(prompt);
  }

  /** The console's answer, when stdin and stdout are a terminal (JDK 22+ also has a console when redirected: asked). */
  private static java.util.Optional<String> console(String prompt) {
    java.io.Console console = System.console();
    if (console == null) {
      return java.util.Optional.empty();
    }
    try {
      if (!(Boolean) java.io.Console.class.getMethod("isTerminal").invoke(console)) {
        return java.util.Optional.empty();
      }
    } catch (ReflectiveOperationException e) {
      // Before JDK 22 a console exists only at a terminal.
    }
    return java.util.Optional.ofNullable(console.readLine("%s", prompt));
  }

  /** Release files are read through this client instead (tests: one that trusts their own certificate). */
  CliContext withHttp(HttpClient client) {
    this.http = client;
    return this;
  }

  /** An https client that follows no redirect (each hop is checked by the caller); made on first use. */
  HttpClient http() {
    if (http == null) {
      http = HttpClient.newBuilder().connectTimeout(CONNECT_TIMEOUT).followRedirects(HttpClient.Redirect.NEVER).build();
    }
    return http;
  }

  /** The management cluster, as the operator's kubeconfig reaches it; made on first use. */
  KubernetesClient kubernetes(String kubeconfigPath) {
    if (kubernetes == null) {
      kubernetes = kubernetesConnector.apply(kubeconfigPath);
    }
    return kubernetes;
  }

  /** As clusterctl and kubectl: {@code --kubeconfig}, else KUBECONFIG, else ~/.kube/config (fabric8's lookup). */
  private static KubernetesClient operatorKubeconfig(String path) {
    if (path != null) {
      if (!java.nio.file.Files.isReadable(java.nio.file.Path.of(path))) {
        throw new CliException("--kubeconfig " + path + " is not a readable file");
      }
      System.setProperty(Config.KUBERNETES_KUBECONFIG_FILE, path);
    }
    Config config = Config.autoConfigure(null);
    config.setRequestRetryBackoffLimit(0);
    config.setConnectionTimeout((int) CONNECT_TIMEOUT.toMillis());
    return new KubernetesClientBuilder().withConfig(config).build();
  }

  @Override
  public void close() {
    closer.run();
    if (kubernetes != null) {
      kubernetes.close();
    }
  }


  /** The Temporal frontend could not be reached: exit code 3. */
  static final class CannotConnectException extends RuntimeException {
    CannotConnectException(String message, Throwable cause) {
      super(message, cause);
    }
  }
}
