package dev.inplace.starter;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;

/**
 * Reads one cluster's tree, read-only: CAPI objects and the upgrade CRs from the management
 * cluster, node Ready and cordon from the workload cluster through its {@code <cluster>-kubeconfig}
 * Secret (checked by {@link WorkloadKubeconfig}). A workload cluster that cannot be read leaves
 * the node fields empty and says why, rather than failing the whole view.
 */
final class ClusterDescriber {
  static final String CAPI_GROUP = "cluster.x-k8s.io";
  static final String CAPI_VERSION = "v1beta2"; // CAPI core types, served at v1beta2 since v1.11
  static final String CLUSTER_NAME_LABEL = "cluster.x-k8s.io/cluster-name";
  static final String CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane";
  static final String DEPLOYMENT_LABEL = "cluster.x-k8s.io/deployment-name";
  static final String INPLACE_GROUP = "upgrade.inplace.dev";
  static final String INPLACE_VERSION = "v1alpha1";

  private final KubernetesClient management;

  ClusterDescriber(KubernetesClient management) {
    this.management = management;
  }

  ClusterTree describe(String namespace, String name) {
    GenericKubernetesResource cluster = resources(CAPI_GROUP, CAPI_VERSION, "Cluster", "clusters")
        .inNamespace(namespace).withName(name).get();
    if (cluster == null) {
      throw new CliException("Cluster " + namespace + "/" + name + " not found");
    }
    List<ClusterTree.Upgrade> upgrades = new ArrayList<>();
    Map<String, Map<String, Object>> inplaceNodes = new HashMap<>();
    for (String kind : List.of("ControlPlaneUpgrade", "WorkersUpgrade")) {
      List<GenericKubernetesResource> crs = resources(INPLACE_GROUP, INPLACE_VERSION, kind, kind.toLowerCase(Locale.ROOT) + "s")
          .inNamespace(namespace).list().getItems();
      crs.stream()
          .filter(cr -> name.equals(string(cr.getAdditionalProperties(), "spec", "clusterName")))
          .sorted(Comparator.comparing(cr -> Objects.toString(cr.getMetadata().getCreationTimestamp(), "")))
          .forEach(cr -> {
            upgrades.add(upgrade(cr));
            // A later CR's record of a machine replaces an earlier one's.
            for (Object n : list(cr.getAdditionalProperties(), "status", "nodes")) {
              if (n instanceof Map<?, ?> node && node.get("machine") instanceof String machine) {
                inplaceNodes.put(machine, cast(node));
              }
            }
          });
    }

    List<GenericKubernetesResource> machines = resources(CAPI_GROUP, CAPI_VERSION, "Machine", "machines")
        .inNamespace(namespace).withLabel(CLUSTER_NAME_LABEL, name).list().getItems();
    String[] workloadError = new String[1];
    Map<String, Node> nodes = workloadNodes(namespace, name, workloadError);

    Map<String, Object> cpRef = map(cluster.getAdditionalProperties(), "spec", "controlPlaneRef");
    ClusterTree.ControlPlane controlPlane = null;
    List<ClusterTree.Machine> cpMachines = machines.stream()
        .filter(m -> m.getMetadata().getLabels() != null && m.getMetadata().getLabels().containsKey(CONTROL_PLANE_LABEL))
        .map(m -> machine(m, nodes, inplaceNodes)).toList();
    if (cpRef != null) {
      String kind = (String) cpRef.get("kind");
      // v1beta2 references name apiGroup (the control-plane kinds inplace knows serve v1beta2); a
      // v1beta1 reference names apiVersion.
      String apiVersion = cpRef.get("apiGroup") instanceof String apiGroup
          ? apiGroup + "/v1beta2"
          : Objects.toString(cpRef.get("apiVersion"), "controlplane.cluster.x-k8s.io/v1beta2");
      String cpName = (String) cpRef.get("name");
      GenericKubernetesResource cp = resources(group(apiVersion), version(apiVersion), kind,
          kind.toLowerCase(Locale.ROOT) + "s").inNamespace(namespace).withName(cpName).get();
      Map<String, Object> props = cp == null ? Map.of() : cp.getAdditionalProperties();
      controlPlane = new ClusterTree.ControlPlane(kind, cpName, string(props, "spec", "version"),
          number(props, "spec", "replicas"), number(props, "status", "readyReplicas"), cpMachines);
    }

    List<ClusterTree.Pool> pools = new ArrayList<>();
    for (GenericKubernetesResource md : resources(CAPI_GROUP, CAPI_VERSION, "MachineDeployment", "machinedeployments")
        .inNamespace(namespace).withLabel(CLUSTER_NAME_LABEL, name).list().getItems()) {
      String mdName = md.getMetadata().getName();
      Map<String, Object> props = md.getAdditionalProperties();
      List<ClusterTree.Machine> members = machines.stream()
          .filter(m -> m.getMetadata().getLabels() != null && mdName.equals(m.getMetadata().getLabels().get(DEPLOYMENT_LABEL)))
          .map(m -> machine(m, nodes, inplaceNodes)).toList();
      pools.add(new ClusterTree.Pool(mdName, string(props, "spec", "template", "spec", "version"),
          number(props, "spec", "replicas"), number(props, "status", "readyReplicas"), members));
    }
    pools.sort(Comparator.comparing(ClusterTree.Pool::name));
    return new ClusterTree(namespace, name, string(cluster.getAdditionalProperties(), "status", "phase"),
        workloadError[0], controlPlane, pools, upgrades);
  }

  private static ClusterTree.Upgrade upgrade(GenericKubernetesResource cr) {
    Map<String, Object> props = cr.getAdditionalProperties();
    List<ClusterTree.Condition> conditions = new ArrayList<>();
    for (Object c : list(props, "status", "conditions")) {
      if (c instanceof Map<?, ?> cond) {
        conditions.add(new ClusterTree.Condition(str(cond.get("type")), str(cond.get("status")),
            str(cond.get("reason")), str(cond.get("message"))));
      }
    }
    return new ClusterTree.Upgrade(cr.getKind(), cr.getMetadata().getName(), string(props, "spec", "version"),
        string(props, "status", "phase"), string(props, "status", "progress"), string(props, "status", "message"),
        conditions);
  }

  private static ClusterTree.Machine machine(GenericKubernetesResource m, Map<String, Node> nodes,
      Map<String, Map<String, Object>> inplaceNodes) {
    Map<String, Object> props = m.getAdditionalProperties();
    String nodeName = string(props, "status", "nodeRef", "name");
    Node node = nodeName == null ? null : nodes.get(nodeName);
    Boolean ready = null;
    Boolean cordoned = null;
    if (node != null) {
      ready = node.getStatus() != null && node.getStatus().getConditions() != null
          && node.getStatus().getConditions().stream()
              .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
      cordoned = Boolean.TRUE.equals(node.getSpec() == null ? null : node.getSpec().getUnschedulable());
    }
    Map<String, Object> inplace = inplaceNodes.getOrDefault(m.getMetadata().getName(), Map.of());
    return new ClusterTree.Machine(m.getMetadata().getName(), string(props, "spec", "version"),
        string(props, "status", "phase"), nodeName, ready, cordoned, str(inplace.get("phase")),
        str(inplace.get("step")), str(inplace.get("workflowId")));
  }

  /** The workload cluster's nodes by name; empty, with the reason in {@code error[0]}, when unreadable. */
  private Map<String, Node> workloadNodes(String namespace, String name, String[] error) {
    Config config;
    try {
      config = WorkloadKubeconfig.fromSecret(management, namespace, name);
    } catch (WorkloadKubeconfig.Refused e) {
      error[0] = e.getMessage();
      return Map.of();
    }
    try (KubernetesClient workload = new KubernetesClientBuilder().withConfig(config).build()) {
      Map<String, Node> byName = new HashMap<>();
      for (Node n : workload.nodes().list().getItems()) {
        byName.put(n.getMetadata().getName(), n);
      }
      return byName;
    } catch (RuntimeException e) {
      error[0] = "workload cluster " + namespace + "/" + name + " cannot be read: " + CliErrors.rootMessage(e);
      return Map.of();
    }
  }

  private io.fabric8.kubernetes.client.dsl.MixedOperation<GenericKubernetesResource,
      io.fabric8.kubernetes.api.model.GenericKubernetesResourceList,
      io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>> resources(
      String group, String version, String kind, String plural) {
    return management.genericKubernetesResources(new ResourceDefinitionContext.Builder()
        .withGroup(group).withVersion(version).withKind(kind).withPlural(plural).withNamespaced(true).build());
  }

  private static String group(String apiVersion) {
    int slash = apiVersion.indexOf('/');
    return slash < 0 ? "" : apiVersion.substring(0, slash);
  }

  private static String version(String apiVersion) {
    return apiVersion.substring(apiVersion.indexOf('/') + 1);
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> cast(Map<?, ?> map) {
    return (Map<String, Object>) map;
  }

  private static Map<String, Object> map(Map<String, Object> root, String... path) {
    Object at = root;
    for (String key : path) {
      if (!(at instanceof Map<?, ?> m)) {
        return null;
      }
      at = m.get(key);
    }
    return at instanceof Map<?, ?> m ? cast(m) : null;
  }

  /** The value at {@code path} in a resource's JSON map, or null where the path breaks off. */
  static Object at(Map<String, Object> root, String... path) {
    Object at = root;
    for (String key : path) {
      if (!(at instanceof Map<?, ?> m)) {
        return null;
      }
      at = m.get(key);
    }
    return at;
  }

  private static String string(Map<String, Object> root, String... path) {
    return str(at(root, path));
  }

  private static Long number(Map<String, Object> root, String... path) {
    return at(root, path) instanceof Number n ? n.longValue() : null;
  }

  private static List<?> list(Map<String, Object> root, String... path) {
    return at(root, path) instanceof List<?> l ? l : List.of();
  }

  private static String str(Object o) {
    return o == null ? null : o.toString();
  }
}
