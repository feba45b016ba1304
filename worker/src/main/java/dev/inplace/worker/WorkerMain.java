package dev.inplace.worker;

import dev.inplace.client.TemporalConnection;
import dev.inplace.worker.extension.CapiExtension;
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
      config = WorkerConfig.fromEnvironment(System.getenv());
      watcherOptions = WatcherOptions.fromEnvironment(System.getenv());
      extensionOptions = ExtensionOptions.fromEnvironment(System.getenv());
    } catch (IllegalArgumentException e) {
      System.err.println(e.getMessage());
      System.exit(2);
      return;
    }
    log.info("starting inplace worker with {}", config);
    KubernetesClient management = managementClient(config);
    TemporalConnection temporal =
        TemporalConnection.connect(
                config.temporalAddress(), config.temporalNamespace(), config.temporalApiKey(),
                config.temporalTlsCert(), config.temporalTlsKey())
            .withSearchAttributes();
    InplaceWorker worker =
        InplaceWorker.start(temporal.client(), config.taskQueue(), management, config.artifactCache());
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
