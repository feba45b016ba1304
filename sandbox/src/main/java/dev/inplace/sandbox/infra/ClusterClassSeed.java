package dev.inplace.sandbox.infra;

import static dev.inplace.sandbox.infra.KubeadmClusterSeed.CLUSTER;
import static dev.inplace.sandbox.infra.KubeadmClusterSeed.NAMESPACE;

import dev.inplace.testbed.KubeControlPlane;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.io.IOException;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The objects a user applies to create a topology-managed kubeadm cluster on the sandbox's
 * infrastructure: a ClusterClass (v1beta2) whose templates are a KubeadmControlPlaneTemplate
 * (external etcd as {@link KubeadmClusterSeed}, rollout maxSurge 0), a SandboxClusterTemplate,
 * SandboxMachineTemplates and a KubeadmConfigTemplate, its one MachineDeployment class rolling out
 * with maxSurge 0 and maxUnavailable 1; and a Cluster with {@code spec.topology} (the class, the
 * version, the control plane's replicas, one MachineDeployment topology). The topology controller
 * creates the KubeadmControlPlane and the MachineDeployment from it.
 *
 * <p>The class's naming templates give them {@link KubeadmClusterSeed}'s names ({@code
 * <cluster>-control-plane}, {@code <cluster>-md-0}), so {@link CapiEstate} reads both kinds of
 * cluster alike.
 */
public final class ClusterClassSeed {
  public static final String CLASS = "sandbox-kubeadm";
  public static final String MD_CLASS = "default-worker";
  public static final String MD_TOPOLOGY = "md-0";
  public static final ResourceDefinitionContext CLUSTER_CLASSES = CapiEstate.core("ClusterClass", "clusterclasses");

  private ClusterClassSeed() {}

  /**
   * What the class offers on top of the cluster's shape: {@code kubernetesVersions} (the ordered
   * versions the topology controller plans a multi-minor upgrade through; empty for none) and the
   * GenerateUpgradePlan handler ({@code <handler>.<ExtensionConfig>}; null for none).
   */
  public record Upgrade(List<String> kubernetesVersions, String generateUpgradePlanExtension) {
    public static final Upgrade NONE = new Upgrade(List.of(), null);
  }

  /** Creates the class and the cluster on {@code mgmt}, its Nodes to register with {@code workload}. */
  public static void seed(KubernetesClient mgmt, KubeControlPlane workload, String version, int controlPlanes, int workers,
      Upgrade upgrade) throws IOException {
    KubeadmClusterSeed.secrets(mgmt, workload);
    String infra = SandboxInfraCrds.GROUP + "/" + SandboxInfraCrds.VERSION;
    KubeadmClusterSeed.create(mgmt, template(infra, "SandboxClusterTemplate", CLASS, Map.of("template", Map.of("spec", Map.of()))));
    KubeadmClusterSeed.create(mgmt, template(infra, "SandboxMachineTemplate", CLASS + "-cp", Map.of("template", Map.of("spec", Map.of()))));
    KubeadmClusterSeed.create(mgmt, template(infra, "SandboxMachineTemplate", CLASS + "-worker", Map.of("template", Map.of("spec", Map.of()))));
    KubeadmClusterSeed.create(mgmt, template("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", CLASS + "-worker",
        Map.of("template", Map.of("spec", Map.of("format", "cloud-config")))));
    KubeadmClusterSeed.create(mgmt, template("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlaneTemplate", CLASS,
        Map.of("template", Map.of("spec", Map.of("kubeadmConfigSpec", KubeadmClusterSeed.externalEtcd(),
            "rollout", Map.of("strategy", Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxSurge", 0))))))));
    Map<String, Object> classSpec = new LinkedHashMap<>();
    classSpec.put("infrastructure", Map.of("templateRef", ref(infra, "SandboxClusterTemplate", CLASS),
        "naming", Map.of("template", "{{ .cluster.name }}")));
    classSpec.put("controlPlane", Map.of("templateRef", ref("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlaneTemplate", CLASS),
        "machineInfrastructure", Map.of("templateRef", ref(infra, "SandboxMachineTemplate", CLASS + "-cp")),
        "naming", Map.of("template", "{{ .cluster.name }}-control-plane")));
    // In place, not by surge: the MachineDeployment creates no Machine when one may be unavailable.
    classSpec.put("workers", Map.of("machineDeployments", List.of(Map.of("class", MD_CLASS,
        "bootstrap", Map.of("templateRef", ref("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", CLASS + "-worker")),
        "infrastructure", Map.of("templateRef", ref(infra, "SandboxMachineTemplate", CLASS + "-worker")),
        "naming", Map.of("template", "{{ .cluster.name }}-{{ .machineDeployment.topologyName }}"),
        "rollout", Map.of("strategy", Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxSurge", 0, "maxUnavailable", 1)))))));
    if (!upgrade.kubernetesVersions().isEmpty()) {
      classSpec.put("kubernetesVersions", upgrade.kubernetesVersions());
    }
    if (upgrade.generateUpgradePlanExtension() != null) {
      classSpec.put("upgrade", Map.of("external", Map.of("generateUpgradePlanExtension", upgrade.generateUpgradePlanExtension())));
    }
    KubeadmClusterSeed.create(mgmt, template("cluster.x-k8s.io/v1beta2", "ClusterClass", CLASS, classSpec));
    CapiEstate estate = new CapiEstate(mgmt, NAMESPACE, CLUSTER, null);
    estate.await("the topology controller reconciles ClusterClass " + CLASS, Duration.ofMinutes(1), () -> {
      GenericKubernetesResource cc = estate.get(CLUSTER_CLASSES, CLASS);
      Object observed = CapiEstate.status(cc).get("observedGeneration");
      return observed instanceof Number n && n.longValue() == cc.getMetadata().getGeneration();
    });
    KubeadmClusterSeed.create(mgmt, KubeadmClusterSeed.object("cluster.x-k8s.io/v1beta2", "Cluster", CLUSTER, Map.of(
        "topology", Map.of("classRef", Map.of("name", CLASS), "version", version,
            "controlPlane", Map.of("replicas", controlPlanes),
            "workers", Map.of("machineDeployments", List.of(Map.of("class", MD_CLASS, "name", MD_TOPOLOGY, "replicas", workers)))))));
  }

  /** The user's upgrade of a topology-managed cluster: only {@code spec.topology.version} changes. */
  public static void upgrade(CapiEstate estate, String version) {
    estate.mergePatchSpec(CapiEstate.CLUSTERS, CLUSTER, "{\"spec\":{\"topology\":{\"version\":\"" + version + "\"}}}");
  }

  private static Map<String, Object> ref(String apiVersion, String kind, String name) {
    return Map.of("apiVersion", apiVersion, "kind", kind, "name", name);
  }

  private static GenericKubernetesResource template(String apiVersion, String kind, String name, Map<String, Object> spec) {
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion(apiVersion);
    r.setKind(kind);
    r.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NAMESPACE).build());
    r.setAdditionalProperty("spec", spec);
    return r;
  }
}
