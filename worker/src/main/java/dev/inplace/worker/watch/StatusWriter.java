package dev.inplace.worker.watch;

import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.UpgradeStatus;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.UnaryOperator;

/**
 * Writes what the watcher owns on a CR: its status (through the status subresource) and its
 * finalizer. Every write starts from the object as stored now (read for it, or just read by the
 * reconcile that writes) and carries its resourceVersion; on a conflict (409) it reads again and
 * recomputes, so a concurrent change is never overwritten. Every string of a status it writes
 * passes {@link StatusRedaction} first.
 */
final class StatusWriter {
  private static final int ATTEMPTS = 5;

  private final KubernetesClient client;

  StatusWriter(KubernetesClient client) {
    this.client = client;
  }

  /** The status replaced and the one written (equal when nothing changed and nothing was written). */
  record Written(UpgradeStatus before, UpgradeStatus after, boolean changed) {}

  /**
   * Computes the next status from the stored one and writes it if it differs; returns null when the
   * CR is gone (or was replaced by another of the same name). The first attempt starts from
   * {@code justRead}, the object the caller read from the server moments ago in the same reconcile
   * (not an informer's copy), instead of reading it again: the write carries its resourceVersion, so a
   * change made since is a conflict (409), after which the object is read again and the next status
   * computed from that.
   */
  <T extends CustomResource<?, UpgradeStatus>> Written writeStatusFrom(T justRead, UnaryOperator<UpgradeStatus> next) {
    for (int attempt = 1; ; attempt++) {
      // A copy: the caller's object is left as it was read.
      T stored = attempt == 1 ? client.getKubernetesSerialization().clone(justRead) : read(justRead);
      if (stored == null) {
        return null;
      }
      UpgradeStatus before = stored.getStatus();
      UpgradeStatus after = StatusRedaction.redact(next.apply(before == null ? null : StatusBuilder.copy(before)));
      if (same(before, after)) {
        return new Written(before, after, false);
      }
      stored.setStatus(after);
      try {
        client.resource(stored).updateStatus();
        return new Written(before, after, true);
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return null;
        }
        if (e.getCode() != 409 || attempt >= ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /** Adds the finalizer; false when the CR is gone or already being deleted. */
  <T extends CustomResource<?, UpgradeStatus>> boolean addFinalizer(T cr) {
    return editFinalizers(cr, true);
  }

  /** Removes the finalizer: a CR being deleted then goes away. */
  <T extends CustomResource<?, UpgradeStatus>> boolean removeFinalizer(T cr) {
    return editFinalizers(cr, false);
  }

  private <T extends CustomResource<?, UpgradeStatus>> boolean editFinalizers(T cr, boolean add) {
    for (int attempt = 1; ; attempt++) {
      T stored = read(cr);
      if (stored == null) {
        return false;
      }
      List<String> finalizers = new ArrayList<>(stored.getMetadata().getFinalizers());
      boolean has = finalizers.contains(InplaceCrds.FINALIZER);
      if (add && stored.getMetadata().getDeletionTimestamp() != null) {
        return false;
      }
      if (has == add) {
        return true;
      }
      if (add) {
        finalizers.add(InplaceCrds.FINALIZER);
      } else {
        finalizers.remove(InplaceCrds.FINALIZER);
      }
      stored.getMetadata().setFinalizers(finalizers);
      try {
        client.resource(stored).update();
        return true;
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          return false;
        }
        if (e.getCode() != 409 || attempt >= ATTEMPTS) {
          throw e;
        }
      }
    }
  }

  /** The CR as stored now, or null if it is gone or is another object of the same name. */
  @SuppressWarnings("unchecked") // the stored object has the class it was asked for
  <T extends CustomResource<?, UpgradeStatus>> T read(T cr) {
    T stored =
        (T) client.resources(cr.getClass())
            .inNamespace(cr.getMetadata().getNamespace())
            .withName(cr.getMetadata().getName())
            .get();
    if (stored == null || !Objects.equals(stored.getMetadata().getUid(), cr.getMetadata().getUid())) {
      return null;
    }
    return stored;
  }

  private static boolean same(UpgradeStatus a, UpgradeStatus b) {
    if (a == null || b == null) {
      return a == b;
    }
    return Serialization.jsonMapper().valueToTree(a).equals(Serialization.jsonMapper().valueToTree(b));
  }
}
