package dev.inplace.worker;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.worker.intake.ArtifactSettings;
import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.capi.ClusterApiActivitiesImpl;
import dev.inplace.activities.capi.HostAuthority;
import dev.inplace.activities.host.HostActivitiesImpl;
import dev.inplace.activities.host.HostDistribution;
import dev.inplace.activities.host.PlanActivitiesImpl;
import dev.inplace.activities.kube.KubeClients;
import dev.inplace.activities.kube.NodeActivitiesImpl;
import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.activities.support.KubernetesSecretSource;
import dev.inplace.activities.support.SecretSource;
import dev.inplace.worker.observe.LogContextInterceptor;
import dev.inplace.workflows.impl.ControlPlaneUpgradeWorkflowImpl;
import dev.inplace.workflows.impl.NodeUpgradeWorkflowImpl;
import dev.inplace.workflows.impl.PlanWorkflowImpl;
import dev.inplace.workflows.impl.WorkersUpgradeWorkflowImpl;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.client.WorkflowClient;
import io.temporal.worker.Worker;
import io.temporal.common.interceptors.WorkerInterceptor;
import io.temporal.worker.WorkerFactory;
import io.temporal.worker.WorkerFactoryOptions;
import io.temporal.worker.WorkerOptions;
import java.nio.file.Path;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The Temporal worker of inplace: registers every workflow and activity implementation on the task
 * queue. Activities reach the management cluster through the given client and everything else
 * (workload clusters, SSH keys, known_hosts) through Secrets read from it.
 */
public final class InplaceWorker implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(InplaceWorker.class);

  private final WorkerFactory factory;
  private final KubeClients kubeClients;
  private final SshConnector ssh;

  private InplaceWorker(WorkerFactory factory, KubeClients kubeClients, SshConnector ssh) {
    this.factory = factory;
    this.kubeClients = kubeClients;
    this.ssh = ssh;
  }

  /** Registers the workflows and activities on {@code taskQueue} and starts polling. */
  public static InplaceWorker start(
      WorkflowClient client, String taskQueue, KubernetesClient management, Path artifactCache) {
    return start(client, taskQueue, management, artifactCache, ArtifactSettings.fromEnvironment(System.getenv()));
  }

  /**
   * As above, with the catalogue source policy (the sandbox's local mirror) and worker interceptors
   * (the run metrics).
   */
  public static InplaceWorker start(
      WorkflowClient client, String taskQueue, KubernetesClient management, Path artifactCache,
      ArtifactSourcePolicy artifacts, WorkerInterceptor... interceptors) {
    return start(client, taskQueue, management, artifactCache, artifacts, PollerOptions.defaults(), interceptors);
  }

  /** As above, polling as {@code poller} says (the local stack turns the sticky queue off). */
  public static InplaceWorker start(
      WorkflowClient client, String taskQueue, KubernetesClient management, Path artifactCache,
      ArtifactSourcePolicy artifacts, PollerOptions poller, WorkerInterceptor... interceptors) {
    SecretSource secrets = new KubernetesSecretSource(management);
    KubeClients kubeClients = new KubeClients(management, secrets);
    SshConnector ssh = new SshConnector(secrets, sshOptions(System.getenv()));
    WorkerFactory factory =
        WorkerFactory.newInstance(client, WorkerFactoryOptions.newBuilder().setWorkerInterceptors(withLogContext(interceptors)).build());
    WorkerOptions.Builder options = WorkerOptions.newBuilder();
    poller.stickyScheduleToStart().ifPresent(options::setStickyQueueScheduleToStartTimeout);
    Worker worker = factory.newWorker(taskQueue, options.build());
    worker.registerWorkflowImplementationTypes(
        NodeUpgradeWorkflowImpl.class, ControlPlaneUpgradeWorkflowImpl.class, WorkersUpgradeWorkflowImpl.class,
        PlanWorkflowImpl.class);
    worker.registerActivitiesImplementations(
        new HostActivitiesImpl(ssh, new HostAuthority(management), new ArtifactCache(artifactCache, artifacts),
            HostDistribution.all()),
        new NodeActivitiesImpl(kubeClients),
        new ClusterApiActivitiesImpl(kubeClients),
        new PlanActivitiesImpl());
    try {
      // The SDK asks the frontend for its capabilities here: a frontend gone since (a server crash)
      // fails the start, and what was built for it is released, so the caller may start again.
      factory.start();
    } catch (RuntimeException e) {
      factory.shutdownNow();
      kubeClients.close();
      ssh.closeIdle();
      throw e;
    }
    log.info("worker polling task queue {}", taskQueue);
    return new InplaceWorker(factory, kubeClients, ssh);
  }

  /** SSH options; {@code INPLACE_SSH_IDLE_SECONDS} says how long a node's connection is kept. */
  static SshClientOptions sshOptions(java.util.Map<String, String> env) {
    SshClientOptions d = SshClientOptions.defaults();
    String idle = env.get("INPLACE_SSH_IDLE_SECONDS");
    if (idle == null || idle.isBlank()) {
      return d;
    }
    long seconds;
    try {
      seconds = Long.parseLong(idle.trim());
    } catch (NumberFormatException e) {
      seconds = -1;
    }
    if (seconds < 0 || seconds > 3600) {
      throw new IllegalArgumentException(
          "INPLACE_SSH_IDLE_SECONDS must be 0..3600 (0: no connection reuse), got '" + idle + "'");
    }
    return new SshClientOptions(
        d.connectTimeout(),
        d.readTimeout(),
        d.commandTimeout(),
        d.keepAliveInterval(),
        java.time.Duration.ofSeconds(seconds));
  }

  private static WorkerInterceptor[] withLogContext(WorkerInterceptor[] interceptors) {
    WorkerInterceptor[] all = new WorkerInterceptor[interceptors.length + 2];
    all[0] = new LogContextInterceptor(); // the step of every activity's log lines
    all[1] = new dev.inplace.worker.observe.ShortCallHeartbeatInterceptor(); // short calls beat while they run
    System.arraycopy(interceptors, 0, all, 2, interceptors.length);
    return all;
  }

  /** Whether the pollers run: started, not shut down, not suspended. */
  public boolean isPolling() {
    return factory.isStarted() && !factory.isShutdown() && !factory.isTerminated();
  }

  @Override
  public void close() {
    factory.shutdown();
    factory.awaitTermination(10, java.util.concurrent.TimeUnit.SECONDS);
    kubeClients.close();
    ssh.closeIdle();
  }
}
