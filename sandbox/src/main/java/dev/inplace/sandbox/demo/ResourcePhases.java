package dev.inplace.sandbox.demo;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The demo's view of its two resources' status, as an operator's {@code kubectl get -w} would have it:
 * informers on both kinds in the namespace (a list, then a watch), so the demo sees each change when
 * the watcher writes it, without asking the API server again and again.
 */
final class ResourcePhases implements AutoCloseable {
  private final SharedIndexInformer<ControlPlaneUpgrade> controlPlanes;
  private final SharedIndexInformer<WorkersUpgrade> workers;
  private final String namespace;
  private final Semaphore changed = new Semaphore(0);

  private ResourcePhases(KubernetesClient client, String namespace) {
    this.namespace = namespace;
    this.controlPlanes = client.resources(ControlPlaneUpgrade.class).inNamespace(namespace).inform(wake());
    this.workers = client.resources(WorkersUpgrade.class).inNamespace(namespace).inform(wake());
  }

  /** Starts following the namespace's resources; returns once both informers have listed them. */
  static ResourcePhases follow(KubernetesClient client, String namespace) {
    return new ResourcePhases(client, namespace);
  }

  /** The status of ControlPlaneUpgrade {@code name} as last seen, or null (not seen yet, no status). */
  UpgradeStatus controlPlane(String name) {
    ControlPlaneUpgrade cr = controlPlanes.getStore().getByKey(namespace + "/" + name);
    return cr == null ? null : cr.getStatus();
  }

  /** The status of WorkersUpgrade {@code name} as last seen, or null. */
  UpgradeStatus workers(String name) {
    WorkersUpgrade cr = workers.getStore().getByKey(namespace + "/" + name);
    return cr == null ? null : cr.getStatus();
  }

  /** Waits until either resource changes, or {@code nanos} have passed. */
  void awaitChange(long nanos) {
    try {
      if (changed.tryAcquire(nanos, TimeUnit.NANOSECONDS)) {
        changed.drainPermits(); // one look covers every change so far
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while following the resources", e);
    }
  }

  @Override
  public void close() {
    controlPlanes.close();
    workers.close();
  }

  private <T> ResourceEventHandler<T> wake() {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        changed.release();
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        changed.release();
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        changed.release();
      }
    };
  }
}
