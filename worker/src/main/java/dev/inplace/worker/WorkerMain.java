package dev.inplace.worker;

import dev.inplace.client.FrontendWait;
import dev.inplace.client.TemporalConnection;
import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.worker.intake.ArtifactSettings;
import dev.inplace.worker.extension.CapiExtension;
import dev.inplace.worker.observe.KubernetesMetricsAccess;
import dev.inplace.worker.observe.MetricsAccess;
import dev.inplace.worker.observe.ObservabilityServer;
import dev.inplace.worker.observe.Readiness;
import dev.inplace.worker.observe.RunMetricsInterceptor;
import dev.inplace.worker.observe.WorkerMetrics;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.worker.extension.HookServer;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The worker process: configuration from the environment, then poll until terminated. */
public final class WorkerMain {
  private static final Logger log = LoggerFactory.getLogger(WorkerMain.class);

  private WorkerMain() {}

  public static void main(String[] args) throws InterruptedException {
    // Before anything else: --help, and no silent in-memory Temporal for a misconfigured worker.
    OptionalInt exit = preflight(Arrays.asList(args), System.getenv(), System.out, System.err);
    if (exit.isPresent()) {
      System.exit(exit.getAsInt());
      return;
    }
    WorkerConfig config;
    Optional<WatcherOptions> watcherOptions;
    Optional<ExtensionOptions> extensionOptions;
    ArtifactSourcePolicy artifacts;
    PollerOptions poller;
    try {
      artifacts = ArtifactSettings.fromEnvironment(System.getenv());
      config = WorkerConfig.fromEnvironment(System.getenv(), log::warn);
      watcherOptions = WatcherOptions.fromEnvironment(System.getenv());
      extensionOptions = ExtensionOptions.fromEnvironment(System.getenv());
      poller = PollerOptions.fromEnvironment(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    log.info("starting inplace worker with {}, artifact sources {}", config, artifacts);
    WorkerMetrics metrics = new WorkerMetrics();
    // Served from the start: /healthz answers at once, /readyz once everything below is up.
    AtomicReference<TemporalConnection> temporalRef = new AtomicReference<>();
    AtomicReference<KubernetesClient> managementRef = new AtomicReference<>();
    AtomicReference<InplaceWorker> workerRef = new AtomicReference<>();
    Readiness readiness =
        Readiness.ofWorker(temporalRef::get, managementRef::get,
            () -> workerRef.get() == null ? null : workerRef.get()::isPolling);
    // The JDK server's limits are process-wide and fixed by the first server created: the extension's
    // read timeout must be in place before /metrics starts, or the hooks would serve without it.
    extensionOptions.ifPresent(HookServer::installRequestLimits);
    // /metrics asks the management API server who the caller is (503 until its client is built below).
    MetricsAccess metricsAccess =
        config.metricsAuthentication() ? new KubernetesMetricsAccess(managementRef::get) : MetricsAccess.open();
    ObservabilityServer http =
        ObservabilityServer.start(config.httpBindAddress(), config.httpPort(), metrics::scrape, readiness, metricsAccess);
    TemporalConnection temporal;
    try {
      temporal = TemporalConnection.connect(config.temporal(), metrics.scope());
    } catch (IllegalArgumentException e) {
      // Unreadable TLS material: a configuration problem, named without the key's contents.
      System.err.println("invalid worker configuration: " + e.getMessage());
      System.exit(2);
      return;
    }
    // A frontend that is down or restarting is waited for (readiness says "connecting" meanwhile), also
    // when it drops away during the start-up calls (the search attributes, the SDK's own check when the
    // worker starts): a worker outlives a server crash, its start too.
    String address = config.temporal().address().orElse("");
    KubernetesClient built = null;
    InplaceWorker started;
    while (true) {
      FrontendWait.await(temporal.service(), address);
      try {
        temporal.withSearchAttributes(config.searchAttributes());
        if (built == null) {
          built = managementClient(config);
        }
        started = InplaceWorker.start(temporal.client(), config.taskQueue(), built, config.artifactCache(), artifacts,
            poller, new RunMetricsInterceptor(metrics.registry()));
        break;
      } catch (RuntimeException e) {
        if (FrontendWait.absent(e)) {
          log.warn("the Temporal frontend at {} went away during start-up; waiting for it again", address);
          continue;
        }
        // Missing search attributes the worker may not add (Temporal Cloud): the message names them and the
        // command. Anything else ends the process too: a worker that cannot start must not live on unready.
        System.err.println("inplace worker cannot start: " + e.getMessage());
        log.error("inplace worker cannot start: {}", e.getMessage());
        temporal.close();
        http.close();
        System.exit(e instanceof IllegalStateException ? 2 : 1);
        return;
      }
    }
    KubernetesClient management = built;
    InplaceWorker worker = started;
    temporalRef.set(temporal);
    managementRef.set(management);
    workerRef.set(worker);
    // The custom resource watcher (ControlPlaneUpgrade, WorkersUpgrade); off with INPLACE_WATCHER=false.
    UpgradeWatcher watcher =
        watcherOptions
            .map(options -> UpgradeWatcher.start(management, temporal.client(), config.taskQueue(), options, artifacts))
            .orElse(null);
    // The CAPI runtime extension (CanUpdateMachine, CanUpdateMachineSet, UpdateMachine); on with INPLACE_EXTENSION=true.
    CapiExtension extension =
        extensionOptions
            .map(options -> CapiExtension.start(options, management, temporal.client(), config.taskQueue(), artifacts))
            .orElse(null);
    CountDownLatch stopped = new CountDownLatch(1);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  log.info("stopping inplace worker");
                  if (extension != null) {
                    extension.close();
                  }
                  if (watcher != null) {
                    watcher.close();
                  }
                  worker.close();
                  temporal.close();
                  management.close();
                  http.close();
                  metrics.close();
                  stopped.countDown();
                }));
    stopped.await();
  }

  /**
   * What the process must settle before it configures anything: {@code --help} prints the usage
   * (exit 0); an argument is a usage error (exit 2). Empty means: go on. A missing Temporal address is
   * refused next, by {@link WorkerConfig} (exit 2 naming TEMPORAL_ADDRESS), because it can also come
   * from the temporal CLI's profile file; the worker never starts an in-memory server.
   */
  static OptionalInt preflight(List<String> args, Map<String, String> env, PrintStream out, PrintStream err) {
    if (args.contains("--help") || args.contains("-h")) {
      out.print(WorkerEnvironment.usage());
      return OptionalInt.of(0);
    }
    if (!args.isEmpty()) {
      err.println("inplace worker: takes no arguments, got " + args + " (configure it through the environment)");
      err.print(WorkerEnvironment.usage());
      return OptionalInt.of(2);
    }
    return OptionalInt.empty();
  }

  private static KubernetesClient managementClient(WorkerConfig config) {
    if (config.kubeconfig().isEmpty()) {
      return new KubernetesClientBuilder().build(); // in-cluster, or ~/.kube/config
    }
    try {
      String text = Files.readString(config.kubeconfig().get());
      return new KubernetesClientBuilder().withConfig(Config.fromKubeconfig(text)).build();
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read kubeconfig " + config.kubeconfig().get(), e);
    }
  }
}
