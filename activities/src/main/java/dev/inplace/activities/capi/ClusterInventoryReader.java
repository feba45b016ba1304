package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.ResourceFields.hasLabel;
import static dev.inplace.activities.capi.ResourceFields.label;
import static dev.inplace.activities.capi.ResourceFields.maps;
import static dev.inplace.activities.capi.ResourceFields.name;
import static dev.inplace.activities.capi.ResourceFields.number;
import static dev.inplace.activities.capi.ResourceFields.string;

import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterInventory.PoolInfo;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * Reads a Cluster's control plane, Machines and MachineDeployments into a {@link ClusterInventory};
 * refuses a ClusterClass cluster ({@link ClusterTopology}).
 */
final class ClusterInventoryReader {
  private static final Comparator<MachineInfo> MACHINE_ORDER =
      Comparator.comparing(MachineInfo::role) // CONTROL_PLANE is declared first
          .thenComparing(MachineInfo::name, NaturalOrder.INSTANCE);

  private final CapiObjectStore store;

  ClusterInventoryReader(CapiObjectStore store) {
    this.store = store;
  }

  ClusterInventory read(ClusterRef cluster) {
    String namespace = cluster.namespace();
    GenericKubernetesResource clusterObject =
        store.get(
            CapiResources.CLUSTER, namespace, cluster.name(), UpgradeFailures.CLUSTER_NOT_FOUND);
    if (clusterObject == null) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.CLUSTER_NOT_FOUND, "Cluster " + cluster + " not found");
    }
    // A run started by hand skips the resources' intake: its parent's first read refuses here.
    ClusterTopology.refusal(cluster, clusterObject).ifPresent(why -> {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, why);
    });
    ObjectRef controlPlane = controlPlaneRef(clusterObject, cluster);
    String controlPlaneVersion = controlPlaneVersion(controlPlane, cluster);
    List<MachineInfo> machines =
        store
            .list(
                CapiResources.MACHINE, namespace, CapiResources.CLUSTER_NAME_LABEL, cluster.name())
            .stream()
            .map(m -> machineInfo(namespace, m))
            .sorted(MACHINE_ORDER)
            .toList();
    List<PoolInfo> pools =
        store
            .list(
                CapiResources.MACHINE_DEPLOYMENT,
                namespace,
                CapiResources.CLUSTER_NAME_LABEL,
                cluster.name())
            .stream()
            .sorted(Comparator.comparing(ResourceFields::name, NaturalOrder.INSTANCE))
            .map(md -> pool(namespace, md))
            .toList();
    return new ClusterInventory(cluster, controlPlane, controlPlaneVersion, machines, pools);
  }

  /** The newest MachineSet of a MachineDeployment, or null when it has none. */
  GenericKubernetesResource newestMachineSet(String namespace, String machineDeployment) {
    return MachineSets.newest(
            store.list(
                CapiResources.MACHINE_SET,
                namespace,
                CapiResources.DEPLOYMENT_NAME_LABEL,
                machineDeployment))
        .orElse(null);
  }

  /**
   * {@code spec.controlPlaneRef}: v1beta2 names {@code apiGroup}; a v1beta1 reference names {@code
   * apiVersion} instead, whose group part is used (cheap to support, so it is).
   */
  private static ObjectRef controlPlaneRef(
      GenericKubernetesResource clusterObject, ClusterRef cluster) {
    String group = string(clusterObject, "spec", "controlPlaneRef", "apiGroup");
    String apiVersion = string(clusterObject, "spec", "controlPlaneRef", "apiVersion");
    if (group == null && apiVersion != null && apiVersion.contains("/")) {
      group = apiVersion.substring(0, apiVersion.indexOf('/'));
    }
    String kind = string(clusterObject, "spec", "controlPlaneRef", "kind");
    String name = string(clusterObject, "spec", "controlPlaneRef", "name");
    if (isBlank(group) || isBlank(kind) || isBlank(name)) {
      throw invalid(
          "Cluster " + cluster + " has no complete spec.controlPlaneRef {apiGroup, kind, name}");
    }
    return new ObjectRef(group, kind, name);
  }

  private String controlPlaneVersion(ObjectRef ref, ClusterRef cluster) {
    ResourceDefinitionContext type = CapiResources.controlPlane(ref);
    GenericKubernetesResource object =
        store.get(type, cluster.namespace(), ref.name(), UpgradeFailures.INVALID_REQUEST);
    String what = CapiObjectStore.describe(type, cluster.namespace(), ref.name());
    if (object == null) {
      throw invalid(what + " (the control plane of Cluster " + cluster + ") not found");
    }
    String version = string(object, "spec", "version");
    if (isBlank(version)) {
      throw invalid(what + " has no spec.version");
    }
    return version;
  }

  private static MachineInfo machineInfo(String namespace, GenericKubernetesResource machine) {
    String what = "Machine " + namespace + "/" + name(machine);
    String nodeName = string(machine, "status", "nodeRef", "name");
    if (isBlank(nodeName)) {
      throw invalid(what + " has no Node yet (status.nodeRef is not set)");
    }
    boolean controlPlane = hasLabel(machine, CapiResources.CONTROL_PLANE_LABEL);
    String pool = controlPlane ? null : label(machine, CapiResources.DEPLOYMENT_NAME_LABEL);
    return new MachineInfo(
        name(machine),
        nodeName,
        controlPlane ? NodeRole.CONTROL_PLANE : NodeRole.WORKER,
        address(machine, what),
        orEmpty(string(machine, "spec", "version")),
        orEmpty(string(machine, "status", "nodeInfo", "kubeletVersion")),
        orEmpty(pool));
  }

  /** The first InternalIP of {@code status.addresses}, else the first ExternalIP. */
  private static String address(GenericKubernetesResource machine, String what) {
    List<Map<?, ?>> addresses = maps(machine, "status", "addresses");
    for (String type : List.of("InternalIP", "ExternalIP")) {
      for (Map<?, ?> address : addresses) {
        if (type.equals(address.get("type"))
            && address.get("address") instanceof String text
            && !text.isBlank()) {
          return text;
        }
      }
    }
    throw invalid(what + " has no InternalIP or ExternalIP in status.addresses");
  }

  private PoolInfo pool(String namespace, GenericKubernetesResource machineDeployment) {
    String name = name(machineDeployment);
    GenericKubernetesResource newest = newestMachineSet(namespace, name);
    return new PoolInfo(
        name,
        newest == null ? "" : name(newest),
        orEmpty(string(machineDeployment, "spec", "template", "spec", "version")),
        (int) number(machineDeployment, 0, "spec", "replicas"));
  }

  private static boolean isBlank(String text) {
    return text == null || text.isBlank();
  }

  private static String orEmpty(String text) {
    return text == null ? "" : text;
  }

  private static RuntimeException invalid(String message) {
    return UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, message);
  }
}
