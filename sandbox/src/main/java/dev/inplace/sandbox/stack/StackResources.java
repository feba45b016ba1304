package dev.inplace.sandbox.stack;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.WorkersUpgrade;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Applies ControlPlaneUpgrade and WorkersUpgrade documents to the estate's management API server
 * (create, or update an existing one): what {@code kubectl apply -f} does against a real API server.
 */
final class StackResources {
  private StackResources() {}

  /**
   * The workflow IDs the watcher wrote into the status of the ControlPlaneUpgrades and WorkersUpgrades,
   * as soon as there are some (a WorkersUpgrade's runs start once the control plane is done).
   */
  static List<String> awaitWorkflowIds(KubernetesClient management, java.time.Duration timeout) {
    long deadline = System.nanoTime() + timeout.toNanos();
    while (true) {
      List<String> ids = new ArrayList<>();
      boolean all = true;
      List<dev.inplace.worker.crd.UpgradeStatus> statuses = new ArrayList<>();
      management.resources(ControlPlaneUpgrade.class).inAnyNamespace().list().getItems().forEach(r -> statuses.add(r.getStatus()));
      management.resources(WorkersUpgrade.class).inAnyNamespace().list().getItems().forEach(r -> statuses.add(r.getStatus()));
      for (var status : statuses) {
        if (status == null || status.getWorkflowIds() == null || status.getWorkflowIds().isEmpty()) {
          all = false;
        } else {
          ids.addAll(status.getWorkflowIds());
        }
      }
      if (all || !ids.isEmpty() || System.nanoTime() > deadline) {
        return ids;
      }
      try {
        Thread.sleep(500);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        return ids;
      }
    }
  }

  /** Applies every document of a multi-document YAML; returns one line per resource. */
  static List<String> apply(KubernetesClient management, String yaml) {
    List<String> applied = new ArrayList<>();
    for (String document : yaml.split("(?m)^---\\s*$")) {
      if (document.isBlank()) {
        continue;
      }
      Map<?, ?> raw = Serialization.unmarshal(document, Map.class);
      Object kind = raw == null ? null : raw.get("kind");
      HasMetadata resource;
      if ("ControlPlaneUpgrade".equals(kind)) {
        resource = Serialization.unmarshal(document, ControlPlaneUpgrade.class);
      } else if ("WorkersUpgrade".equals(kind)) {
        resource = Serialization.unmarshal(document, WorkersUpgrade.class);
      } else {
        throw new IllegalArgumentException("only ControlPlaneUpgrade and WorkersUpgrade documents can be applied, got kind " + kind);
      }
      management.resource(resource).createOr(r -> r.update());
      applied.add(kind + " " + resource.getMetadata().getNamespace() + "/" + resource.getMetadata().getName() + " applied");
    }
    return applied;
  }
}
