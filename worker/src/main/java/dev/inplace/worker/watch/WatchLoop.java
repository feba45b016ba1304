package dev.inplace.worker.watch;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.time.Duration;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Informers on both kinds feed a queue of CR keys that one thread works through, so each CR is
 * handled by one reconcile at a time and a key queued twice is handled once. Each run named in an
 * unsettled CR's status is followed to its end ({@link RunFollower}), and its end queues its CR at
 * once (with a status refresh); a ControlPlaneUpgrade whose phase changes queues the not yet started
 * WorkersUpgrades of its cluster, which may be waiting for it. A timer queues every unsettled CR each
 * status interval: the fallback that refreshes progress in between and covers a run that cannot be
 * followed. Failures are retried with exponential backoff.
 */
final class WatchLoop implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WatchLoop.class);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(60);
  /** How long {@link #close} waits for the informers to have received every event of their watches. */
  private static final Duration SETTLE_LIMIT = Duration.ofSeconds(5);

  private record Key(Class<?> type, String namespace, String name) {
    @Override
    public String toString() {
      return type.getSimpleName() + " " + namespace + "/" + name;
    }
  }

  private final KubernetesClient client;
  private final Reconciler reconciler;
  private final WatcherOptions options;
  private final ScheduledExecutorService executor;
  private final RunFollower follower;
  /** Queued keys, with whether the timer queued them. */
  private final Map<Key, Boolean> queued = new LinkedHashMap<>();
  private final Map<Key, Integer> failures = new HashMap<>();
  private SharedIndexInformer<ControlPlaneUpgrade> controlPlanes;
  private SharedIndexInformer<WorkersUpgrade> workers;
  private volatile boolean closed;

  WatchLoop(KubernetesClient client, Reconciler reconciler, WatcherOptions options, RunFollower follower) {
    this.client = client;
    this.reconciler = reconciler;
    this.options = options;
    this.follower = follower;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "inplace-watcher");
              t.setDaemon(true);
              return t;
            });
  }

  void start() {
    controlPlanes = informer(ControlPlaneUpgrade.class);
    workers = informer(WorkersUpgrade.class);
    long interval = options.statusInterval().toMillis();
    executor.scheduleWithFixedDelay(this::tick, interval, interval, TimeUnit.MILLISECONDS);
    log.info("watching ControlPlaneUpgrade and WorkersUpgrade in {}",
        options.namespace() == null ? "every namespace" : "namespace " + options.namespace());
  }

  private <T extends CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> SharedIndexInformer<T> informer(Class<T> type) {
    SharedIndexInformer<T> informer =
        options.namespace() == null
            ? client.resources(type).inAnyNamespace().runnableInformer(options.resyncPeriod().toMillis())
            : client.resources(type).inNamespace(options.namespace()).runnableInformer(options.resyncPeriod().toMillis());
    informer.addEventHandler(
        new ResourceEventHandler<>() {
          @Override
          public void onAdd(T cr) {
            enqueue(key(type, cr), false);
            followRuns(key(type, cr), cr);
          }

          @Override
          public void onUpdate(T before, T after) {
            enqueue(key(type, after), false);
            followRuns(key(type, after), after);
            if (type == ControlPlaneUpgrade.class && phase(before) != phase(after)) {
              wakeWaitingWorkers(after);
            }
          }

          @Override
          public void onDelete(T cr, boolean finalStateUnknown) {
            // Gone for good: a CR with our finalizer is seen with its deletionTimestamp first.
            workflowIds(cr).forEach(follower::forget);
            if (type == ControlPlaneUpgrade.class) {
              wakeWaitingWorkers(cr);
            }
          }
        });
    informer.exceptionHandler(
        (started, error) -> {
          log.warn("{} informer: {} (are the CRDs in deploy/crds/ applied, and may the worker list them?); retrying",
              type.getSimpleName(), error.getMessage());
          return !closed;
        });
    informer.start();
    return informer;
  }

  /**
   * Follows each run of an unsettled CR to its end, which queues the CR at once as the timer would;
   * a settled CR's runs have ended and are forgotten.
   */
  private void followRuns(Key key, CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr) {
    if (closed) {
      return;
    }
    if (!Reconciler.needsAttention(cr)) {
      workflowIds(cr).forEach(follower::forget);
      return;
    }
    for (String id : workflowIds(cr)) {
      follower.follow(id, () -> enqueue(key, true));
    }
  }

  private static List<String> workflowIds(CustomResource<?, UpgradeStatus> cr) {
    UpgradeStatus status = cr.getStatus();
    return status == null || status.getWorkflowIds() == null ? List.of() : status.getWorkflowIds();
  }

  private static UpgradePhase phase(CustomResource<?, UpgradeStatus> cr) {
    return cr.getStatus() == null ? null : cr.getStatus().getPhase();
  }

  /**
   * Queues the WorkersUpgrades that may be waiting for this ControlPlaneUpgrade: those of its
   * namespace and cluster that have not started their runs yet and are not settled (a WorkersUpgrade
   * only waits before it starts, and decides from the ControlPlaneUpgrades of its namespace and
   * cluster). Started or settled ones do not depend on the control plane's phase.
   */
  private void wakeWaitingWorkers(CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> controlPlane) {
    String namespace = controlPlane.getMetadata().getNamespace();
    String cluster = controlPlane.getSpec() == null ? null : controlPlane.getSpec().getClusterName();
    if (closed || cluster == null || workers == null) {
      return;
    }
    for (WorkersUpgrade w : workers.getStore().list()) {
      if (namespace.equals(w.getMetadata().getNamespace()) && w.getSpec() != null
          && cluster.equals(w.getSpec().getClusterName())
          && (w.getStatus() == null || !w.getStatus().started()) && Reconciler.needsAttention(w)) {
        enqueue(key(WorkersUpgrade.class, w), false);
      }
    }
  }

  private static Key key(Class<?> type, CustomResource<?, ?> cr) {
    return new Key(type, cr.getMetadata().getNamespace(), cr.getMetadata().getName());
  }

  private void tick() {
    try {
      for (SharedIndexInformer<? extends CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> informer :
          List.of(controlPlanes, workers)) {
        for (CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr : informer.getStore().list()) {
          if (Reconciler.needsAttention(cr)) {
            enqueue(key(informer == controlPlanes ? ControlPlaneUpgrade.class : WorkersUpgrade.class, cr), true);
          }
        }
      }
    } catch (RuntimeException e) {
      log.warn("status timer: {}", e.toString());
    }
  }

  private void enqueue(Key key, boolean tick) {
    if (closed) {
      return;
    }
    synchronized (queued) {
      Boolean already = queued.get(key);
      if (already != null) {
        queued.put(key, already || tick);
        return;
      }
      queued.put(key, tick);
    }
    try {
      executor.execute(() -> process(key));
    } catch (java.util.concurrent.RejectedExecutionException closing) {
      // closed between the check above and here: nothing more to reconcile
    }
  }

  private void process(Key key) {
    Boolean tick;
    synchronized (queued) {
      tick = queued.remove(key);
    }
    if (tick == null || closed) {
      return;
    }
    CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr =
        (key.type() == ControlPlaneUpgrade.class ? controlPlanes : workers)
            .getStore()
            .getByKey(key.namespace() + "/" + key.name());
    if (cr == null) {
      failures.remove(key);
      return;
    }
    try {
      reconciler.reconcile(cr, tick);
      failures.remove(key);
    } catch (RuntimeException e) {
      int n = failures.merge(key, 1, Integer::sum);
      long delay = Math.min(MAX_BACKOFF.toMillis(), 1000L << Math.min(n - 1, 6));
      if (e instanceof TransientProblem) {
        log.warn("{}: {}; again in {} ms", key, e.getMessage(), delay);
      } else {
        log.warn("{}: reconcile failed, again in {} ms", key, delay, e);
      }
      if (!closed) {
        executor.schedule(() -> enqueue(key, true), delay, TimeUnit.MILLISECONDS);
      }
    }
  }

  /**
   * Stops reconciling first, then lets each informer receive every event its watch still has coming,
   * and closes the informers last, so no watch is closed while the API server is sending it an event.
   * That is what deadlocks fabric8's mock API server (the tests' and the sandbox's): a watch closed
   * with one of its events in flight makes the server's {@code WatchEventsListener.onClosed} wait, on
   * its event loop, for that send, which needs the same event loop (docs/benchmarks.md, "The mock API
   * server's teardown"). A real API server does not mind; there the wait costs one list per kind.
   */
  @Override
  public void close() {
    closed = true;
    follower.close();
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(15, TimeUnit.SECONDS)) {
        log.warn("watcher thread did not stop within 15 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    long deadline = System.nanoTime() + SETTLE_LIMIT.toNanos();
    settle(controlPlanes, ControlPlaneUpgrade.class, deadline);
    settle(workers, WorkersUpgrade.class, deadline);
    if (controlPlanes != null) {
      controlPlanes.stop();
    }
    if (workers != null) {
      workers.stop();
    }
  }

  /**
   * Waits until the informer's cache holds exactly what the API server lists, every resource at the
   * same resourceVersion (until {@code deadline} at most). The server sends one watch's events in the
   * order it queued them, so once the cache shows the last write to every resource, and no longer
   * shows a deleted one, every event queued for this watch before has been delivered; nothing writes
   * these resources from here any more (reconciling has stopped).
   */
  private <T extends CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> void settle(
      SharedIndexInformer<T> informer, Class<T> type, long deadline) {
    if (informer == null || !informer.hasSynced()) {
      return;
    }
    try {
      while (!versions(list(type)).equals(versions(informer.getStore().list()))) {
        if (System.nanoTime() > deadline) {
          log.warn("{} informer did not catch up with the API server within {} s; closing it anyway",
              type.getSimpleName(), SETTLE_LIMIT.toSeconds());
          return;
        }
        Thread.sleep(20);
      }
    } catch (KubernetesClientException e) {
      log.debug("{}: cannot list to let the informer catch up before closing: {}", type.getSimpleName(), e.getMessage());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private <T extends CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> List<T> list(Class<T> type) {
    return (options.namespace() == null
            ? client.resources(type).inAnyNamespace().list()
            : client.resources(type).inNamespace(options.namespace()).list())
        .getItems();
  }

  /** namespace/name -> resourceVersion. */
  private static Map<String, String> versions(List<? extends CustomResource<?, ?>> resources) {
    Map<String, String> versions = new HashMap<>();
    for (CustomResource<?, ?> cr : resources) {
      versions.put(cr.getMetadata().getNamespace() + "/" + cr.getMetadata().getName(), cr.getMetadata().getResourceVersion());
    }
    return versions;
  }
}
