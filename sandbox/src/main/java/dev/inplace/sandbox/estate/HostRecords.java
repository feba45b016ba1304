package dev.inplace.sandbox.estate;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;

/**
 * What the management cluster must say about a sandbox host before the host activities touch it
 * (they confirm a request's host against it, issue 34 H4): its Cluster, and a Machine with the
 * host's Node and address. For tests that run host steps on sandbox hosts without a whole estate.
 */
public final class HostRecords {
  private HostRecords() {}

  /**
   * Creates (or keeps) Cluster {@code namespace/cluster} and Machine {@code namespace/machine} whose
   * Node is {@code node} at {@code address}, and returns the access a run of that Machine would ask
   * for: the cluster's conventional Secrets ({@code <cluster>-ssh-key}, {@code <cluster>-known-hosts}).
   */
  public static HostAccess record(KubernetesClient management, String namespace, String cluster, String machine,
      String node, String address, String user, int port) {
    put(management, CapiResources.CLUSTER, object("Cluster", namespace, cluster, Map.of(), Map.of()), null);
    put(management, CapiResources.MACHINE,
        object("Machine", namespace, machine, Map.of(CapiResources.CLUSTER_NAME_LABEL, cluster),
            Map.of("clusterName", cluster)),
        Map.of("nodeRef", Map.of("name", node),
            "addresses", List.of(Map.of("type", "InternalIP", "address", address))));
    return new HostAccess(namespace, node, address,
        new SshSettings(user, port, cluster + "-ssh-key", cluster + "-known-hosts", null), cluster, machine);
  }

  private static GenericKubernetesResource object(
      String kind, String namespace, String name, Map<String, String> labels, Map<String, Object> spec) {
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion(CapiResources.CORE_GROUP + "/" + CapiResources.VERSION);
    r.setKind(kind);
    r.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).withLabels(labels).build());
    r.setAdditionalProperty("spec", spec);
    return r;
  }

  private static void put(
      KubernetesClient management, ResourceDefinitionContext type, GenericKubernetesResource r, Map<String, Object> status) {
    var stored = management.genericKubernetesResources(type).inNamespace(r.getMetadata().getNamespace())
        .withName(r.getMetadata().getName());
    if (stored.get() == null) {
      management.genericKubernetesResources(type).inNamespace(r.getMetadata().getNamespace()).resource(r).create();
    }
    if (status != null) {
      stored.editStatus(current -> {
        current.setAdditionalProperty("status", status);
        return current;
      });
    }
  }
}
