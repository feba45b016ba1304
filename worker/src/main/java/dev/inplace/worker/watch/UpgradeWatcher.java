package dev.inplace.worker.watch;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.worker.intake.ArtifactSettings;
import dev.inplace.worker.intake.RunIntake;
import dev.inplace.activities.capi.ClusterApiActivitiesImpl;
import dev.inplace.activities.kube.KubeClients;
import dev.inplace.worker.watch.WatcherOptions.LeaderElection;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderCallbacks;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElectionConfigBuilder;
import io.fabric8.kubernetes.client.extended.leaderelection.LeaderElector;
import io.fabric8.kubernetes.client.extended.leaderelection.resourcelock.LeaseLock;
import io.temporal.client.WorkflowClient;
import java.time.Clock;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The ControlPlaneUpgrade/WorkersUpgrade watcher: turns each custom resource into its workflow
 * run(s) and mirrors them back into its status (see docs/crd-reference.md). With leader election
 * only the replica holding the Lease acts; the others wait to take over.
 *
 * <pre>{@code
 * try (UpgradeWatcher watcher =
 *     UpgradeWatcher.start(management, temporal.client(), config.taskQueue(), WatcherOptions.defaults())) {
 *   ... // apply ControlPlaneUpgrade / WorkersUpgrade objects, read their status
 * }
 * }</pre>
 */
public final class UpgradeWatcher implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(UpgradeWatcher.class);

  private final KubernetesClient management;
  private final WatcherOptions options;
  private final KubeClients kubeClients;
  private final Reconciler reconciler;
  private final WorkflowClient temporal;
  private final ExecutorService electionThreads;
  private final Object lock = new Object();
  private WatchLoop loop;
  private CompletableFuture<?> election;
  private volatile boolean closed;
  /** The holder this replica last read from the Lease (itself included); null before the first read. */
  private volatile String observedLeader;

  private UpgradeWatcher(
      KubernetesClient management, WorkflowClient client, String taskQueue, WatcherOptions options,
      ArtifactSourcePolicy artifacts) {
    this.management = management;
    this.options = options;
    this.kubeClients = new KubeClients(management);
    this.temporal = client;
    String identity = options.leaderElection() == null ? "inplace-worker" : options.leaderElection().identity();
    this.reconciler =
        new Reconciler(
            management,
            new SpecResolver(new RunIntake(management, artifacts), new ClusterApiActivitiesImpl(kubeClients)),
            new RunStarter(client, taskQueue),
            new RunObserver(client),
            new StatusWriter(management),
            new UpgradeEvents(management, identity),
            options,
            Clock.systemUTC());
    this.electionThreads =
        Executors.newCachedThreadPool(
            r -> {
              Thread t = new Thread(r, "inplace-leader-election");
              t.setDaemon(true);
              return t;
            });
  }

  /**
   * Starts watching. Without leader election the watcher acts at once; with it, once this process
   * holds the Lease.
   *
   * @param management the management cluster (where the CRs, Clusters, Machines and Secrets are)
   * @param client the Temporal client runs are started with
   * @param taskQueue the task queue the worker polls
   */
  public static UpgradeWatcher start(
      KubernetesClient management, WorkflowClient client, String taskQueue, WatcherOptions options) {
    return start(management, client, taskQueue, options, ArtifactSettings.fromEnvironment(System.getenv()));
  }

  /** As above, with the catalogue source policy given (the sandbox's local mirror). */
  public static UpgradeWatcher start(
      KubernetesClient management, WorkflowClient client, String taskQueue, WatcherOptions options,
      ArtifactSourcePolicy artifacts) {
    UpgradeWatcher watcher = new UpgradeWatcher(management, client, taskQueue, options, artifacts);
    if (options.leaderElection() == null) {
      watcher.lead();
    } else {
      watcher.elect();
    }
    return watcher;
  }

  /** Whether this process is acting on CRs now. */
  public boolean isLeading() {
    synchronized (lock) {
      return loop != null;
    }
  }

  /**
   * The Lease holder this replica last saw: itself when leading, the other replica when it has read
   * the Lease and stepped back, empty before its first read or after a release.
   */
  public Optional<String> observedLeader() {
    return Optional.ofNullable(observedLeader);
  }

  private void elect() {
    LeaderElection e = options.leaderElection();
    LeaderElector elector =
        new LeaderElector(
            management,
            new LeaderElectionConfigBuilder()
                .withName(e.leaseName())
                .withLock(new LeaseLock(e.leaseNamespace(), e.leaseName(), e.identity()))
                .withLeaseDuration(e.leaseDuration())
                .withRenewDeadline(e.renewDeadline())
                .withRetryPeriod(e.retryPeriod())
                .withReleaseOnCancel(true)
                .withLeaderCallbacks(
                    new LeaderCallbacks(
                        this::lead,
                        this::follow,
                        leader -> {
                          observedLeader = leader;
                          log.info("watcher leader is now {}", leader);
                        }))
                .build(),
            electionThreads);
    synchronized (lock) {
      if (closed) {
        return;
      }
      election = elector.start();
      election.whenComplete(
          (ignored, error) -> {
            // Leadership lost (or never won before an error): compete again unless closing.
            if (!closed) {
              electionThreads.execute(this::elect);
            }
          });
    }
    log.info("competing for Lease {}/{} as {}", e.leaseNamespace(), e.leaseName(), e.identity());
  }

  private void lead() {
    synchronized (lock) {
      if (closed || loop != null) {
        return;
      }
      log.info("acting on ControlPlaneUpgrade and WorkersUpgrade resources");
      loop = new WatchLoop(management, reconciler, options, new RunFollower(temporal));
      loop.start();
    }
  }

  /** Lost the Lease: stop acting at once, another replica takes over. */
  private void follow() {
    if (stop() && !closed) {
      log.warn("lost the watcher Lease: no longer acting on custom resources");
    }
  }

  private boolean stop() {
    WatchLoop stopping;
    synchronized (lock) {
      stopping = loop;
      loop = null;
    }
    if (stopping != null) {
      stopping.close();
    }
    return stopping != null;
  }

  /**
   * Stops acting first and releases the Lease after: the next replica takes the Lease only once this
   * one has stopped reconciling and closed its watches ({@link WatchLoop#close}), so two replicas never
   * act on the same resources at once, and the watches close while nothing writes the resources
   * (docs/benchmarks.md, "The mock API server's teardown").
   */
  @Override
  public void close() {
    CompletableFuture<?> running;
    synchronized (lock) {
      closed = true;
      running = election;
    }
    stop();
    if (running != null) {
      running.cancel(true); // releases the Lease (fabric8 calls follow(), which finds nothing to stop)
    }
    electionThreads.shutdownNow();
    try {
      electionThreads.awaitTermination(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    kubeClients.close();
  }
}
