package dev.inplace.starter;

import dev.inplace.workflows.api.ClusterRef;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * A cluster's hosts as the product reaches them: each Machine (label {@code
 * cluster.x-k8s.io/cluster-name}) with its Node ({@code status.nodeRef}) and address, the first
 * InternalIP of {@code status.addresses}, else the first ExternalIP (the activities' rule).
 */
final class ClusterHosts {
  /** One host to scan. */
  record Host(String machine, String node, String address) {
    /** True when {@code name} is this host's Machine, Node or address (how {@code --expect} names it). */
    boolean isNamed(String name) {
      return name.equals(machine) || name.equals(node) || name.equals(address);
    }
  }

  private ClusterHosts() {}

  /**
   * The hosts of {@code cluster}, in Machine name order; only {@code machines} when it is not empty.
   *
   * @throws HostsScanRefused when the Cluster is missing, a named Machine is not one of its own, or
   *     a Machine has no Node or address yet
   */
  static List<Host> read(KubernetesClient management, ClusterRef cluster, List<String> machines) {
    GenericKubernetesResource clusterObject = management.genericKubernetesResources(type("Cluster", "clusters"))
        .inNamespace(cluster.namespace()).withName(cluster.name()).get();
    if (clusterObject == null) {
      throw new HostsScanRefused("Cluster " + cluster + " not found");
    }
    List<GenericKubernetesResource> found = management.genericKubernetesResources(type("Machine", "machines"))
        .inNamespace(cluster.namespace()).withLabel(ClusterDescriber.CLUSTER_NAME_LABEL, cluster.name())
        .list().getItems().stream()
        .sorted(Comparator.comparing(m -> m.getMetadata().getName()))
        .toList();
    List<String> names = found.stream().map(m -> m.getMetadata().getName()).toList();
    List<String> unknown = machines.stream().filter(m -> !names.contains(m)).toList();
    if (!unknown.isEmpty()) {
      throw new HostsScanRefused("Machine(s) " + String.join(", ", unknown) + " are not Machines of Cluster " + cluster
          + "; it has: " + (names.isEmpty() ? "none" : String.join(", ", names)));
    }
    List<Host> hosts = new ArrayList<>();
    for (GenericKubernetesResource machine : found) {
      String name = machine.getMetadata().getName();
      if (!machines.isEmpty() && !machines.contains(name)) {
        continue;
      }
      Map<String, Object> props = machine.getAdditionalProperties();
      String what = "Machine " + cluster.namespace() + "/" + name;
      if (!(ClusterDescriber.at(props, "status", "nodeRef", "name") instanceof String node) || node.isBlank()) {
        throw new HostsScanRefused(what + " has no Node yet (status.nodeRef is not set)");
      }
      hosts.add(new Host(name, node, address(props, what)));
    }
    if (hosts.isEmpty()) {
      throw new HostsScanRefused("Cluster " + cluster + " has no Machines");
    }
    return hosts;
  }

  private static String address(Map<String, Object> machine, String what) {
    List<?> addresses = ClusterDescriber.at(machine, "status", "addresses") instanceof List<?> l ? l : List.of();
    for (String type : List.of("InternalIP", "ExternalIP")) {
      for (Object entry : addresses) {
        if (entry instanceof Map<?, ?> address && type.equals(address.get("type"))
            && address.get("address") instanceof String text && !text.isBlank()) {
          return text;
        }
      }
    }
    throw new HostsScanRefused(what + " has no InternalIP or ExternalIP in status.addresses");
  }

  private static ResourceDefinitionContext type(String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup(ClusterDescriber.CAPI_GROUP)
        .withVersion(ClusterDescriber.CAPI_VERSION).withKind(kind).withPlural(plural).withNamespaced(true).build();
  }
}
