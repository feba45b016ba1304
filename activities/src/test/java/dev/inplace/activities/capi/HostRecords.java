package dev.inplace.activities.capi;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;

/**
 * The management cluster's records of a test host, which {@link HostAuthority} confirms a request
 * against: its Cluster, a Machine with its Node and address, and optionally an upgrade resource
 * naming SSH settings and a host profile, or an InplaceHostProfile.
 */
public final class HostRecords {
  private HostRecords() {}

  /** Cluster {@code namespace/cluster} and its Machine {@code machine} whose Node {@code node} is at {@code address}. */
  public static GenericKubernetesResource machine(
      KubernetesClient management, String namespace, String cluster, String machine, String node, String address) {
    put(management, CapiResources.CLUSTER, object(CapiResources.CORE_GROUP + "/" + CapiResources.VERSION, "Cluster",
        namespace, cluster, Map.of(), Map.of()), null);
    return put(management, CapiResources.MACHINE,
        object(CapiResources.CORE_GROUP + "/" + CapiResources.VERSION, "Machine", namespace, machine,
            Map.of(CapiResources.CLUSTER_NAME_LABEL, cluster), Map.of("clusterName", cluster)),
        Map.of("nodeRef", Map.of("name", node),
            "addresses", List.of(Map.of("type", "InternalIP", "address", address),
                Map.of("type", "Hostname", "address", node))));
  }

  /** An upgrade resource of {@code kind} ({@code WorkersUpgrade}) for the cluster, with {@code spec}'s fields. */
  public static void upgradeResource(
      KubernetesClient management, String kind, String namespace, String name, Map<String, Object> spec) {
    ResourceDefinitionContext type = new ResourceDefinitionContext.Builder()
        .withGroup(ConfiguredAccess.GROUP).withVersion(ConfiguredAccess.VERSION).withKind(kind)
        .withPlural(kind.toLowerCase(java.util.Locale.ROOT) + "s").withNamespaced(true).build();
    put(management, type, object(ConfiguredAccess.GROUP + "/" + ConfiguredAccess.VERSION, kind, namespace, name,
        Map.of(), spec), null);
  }

  /** A cluster-scoped InplaceHostProfile with {@code layout}'s fields. */
  public static void hostProfile(KubernetesClient management, String name, Map<String, Object> layout) {
    GenericKubernetesResource p = object(ConfiguredAccess.GROUP + "/" + ConfiguredAccess.VERSION,
        ConfiguredAccess.HOST_PROFILE_KIND, null, name, Map.of(), layout);
    if (management.genericKubernetesResources(ConfiguredAccess.HOST_PROFILE).withName(name).get() == null) {
      management.genericKubernetesResources(ConfiguredAccess.HOST_PROFILE).resource(p).create();
    }
  }

  private static GenericKubernetesResource object(
      String apiVersion, String kind, String namespace, String name, Map<String, String> labels, Map<String, Object> spec) {
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion(apiVersion);
    r.setKind(kind);
    r.setMetadata(new ObjectMetaBuilder().withNamespace(namespace).withName(name).withLabels(labels).build());
    r.setAdditionalProperty("spec", spec);
    return r;
  }

  private static GenericKubernetesResource put(
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
    return stored.get();
  }
}
