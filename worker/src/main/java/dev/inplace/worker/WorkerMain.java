package dev.inplace.worker;

import dev.inplace.client.TemporalConnection;
import dev.inplace.worker.extension.CapiExtension;
import dev.inplace.worker.observe.ObservabilityServer;
import dev.inplace.worker.observe.Readiness;
import dev.inplace.worker.observe.RunMetricsInterceptor;
import dev.inplace.worker.observe.WorkerMetrics;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.atomic.AtomicReference;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** The worker process: configuration from the environment, then poll until terminated. */
public final class WorkerMain {
  private static final Logger log = LoggerFactory.getLogger(WorkerMain.class);

  private WorkerMain() {}

  public static void main(String[] args) throws InterruptedException {
    WorkerConfig config;
    Optional<WatcherOptions> watcherOptions;
    Optional<ExtensionOptions> extensionOptions;
    try {
      config = WorkerConfig.fromEnvironment(System.getenv(), log::warn);
      watcherOptions = WatcherOptions.fromEnvironment(System.getenv());
      extensionOptions = ExtensionOptions.fromEnvironment(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    log.info("starting inplace worker with {}", config);
    WorkerMetrics metrics = new WorkerMetrics();
    // Served from the start: /healthz answers at once, /readyz once everything below is up.
    AtomicReference<TemporalConnection> temporalRef = new AtomicReference<>();
    AtomicReference<KubernetesClient> managementRef = new AtomicReference<>();
    AtomicReference<InplaceWorker> workerRef = new AtomicReference<>();
    Readiness readiness =
        Readiness.ofWorker(temporalRef::get, managementRef::get,
            () -> workerRef.get() == null ? null : workerRef.get()::isPolling);
    ObservabilityServer http =
        ObservabilityServer.start(config.httpBindAddress(), config.httpPort(), metrics::scrape, readiness);
    TemporalConnection temporal;
    try {
      temporal = TemporalConnection.connect(config.temporal(), metrics.scope());
    } catch (IllegalArgumentException e) {
      // Unreadable TLS material: a configuration problem, named without the key's contents.
      System.err.println("invalid worker configuration: " + e.getMessage());
      System.exit(2);
      return;
    }
    temporal.withSearchAttributes();
    temporalRef.set(temporal);
    KubernetesClient management = managementClient(config);
    managementRef.set(management);
    InplaceWorker worker =
        InplaceWorker.start(temporal.client(), config.taskQueue(), management, config.artifactCache(),
            new RunMetricsInterceptor(metrics.registry()));
    workerRef.set(worker);
    // The custom resource watcher (ControlPlaneUpgrade, WorkersUpgrade); off with INPLACE_WATCHER=false.
    UpgradeWatcher watcher =
        watcherOptions
            .map(options -> UpgradeWatcher.start(management, temporal.client(), config.taskQueue(), options))
            .orElse(null);
    // The CAPI runtime extension (CanUpdateMachine, CanUpdateMachineSet, UpdateMachine); on with INPLACE_EXTENSION=true.
    CapiExtension extension =
        extensionOptions
            .map(options -> CapiExtension.start(options, management, temporal.client(), config.taskQueue()))
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
