package dev.inplace.worker.watch;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
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
 * handled by one reconcile at a time and a key queued twice is handled once. A timer queues every
 * unsettled CR each status interval (that is the status mirror's rate); failures are retried with
 * exponential backoff.
 */
final class WatchLoop implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(WatchLoop.class);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(60);

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
  /** Queued keys, with whether the timer queued them. */
  private final Map<Key, Boolean> queued = new LinkedHashMap<>();
  private final Map<Key, Integer> failures = new HashMap<>();
  private SharedIndexInformer<ControlPlaneUpgrade> controlPlanes;
  private SharedIndexInformer<WorkersUpgrade> workers;
  private volatile boolean closed;

  WatchLoop(KubernetesClient client, Reconciler reconciler, WatcherOptions options) {
    this.client = client;
    this.reconciler = reconciler;
    this.options = options;
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
          }

          @Override
          public void onUpdate(T before, T after) {
            enqueue(key(type, after), false);
          }

          @Override
          public void onDelete(T cr, boolean finalStateUnknown) {
            // Gone for good: a CR with our finalizer is seen with its deletionTimestamp first.
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
   * Stops reconciling first and the informers after, so no reconcile writes to a resource whose
   * watch is being closed: a write's watch event in flight while its watch closes is what deadlocks
   * fabric8's mock API server on teardown (its WatchEventsListener.onClosed waits, on the event
   * loop, for a send that needs the same event loop), and a reconcile has nothing to read once its
   * informer's cache is gone.
   */
  @Override
  public void close() {
    closed = true;
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(15, TimeUnit.SECONDS)) {
        log.warn("watcher thread did not stop within 15 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    if (controlPlanes != null) {
      controlPlanes.stop();
    }
    if (workers != null) {
      workers.stop();
    }
  }
}
