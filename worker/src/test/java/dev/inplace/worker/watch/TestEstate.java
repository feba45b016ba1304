package dev.inplace.worker.watch;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.SshSpec;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * A CAPI cluster in the mock API server, as the watcher reads it: Cluster {@code fleet/edge} with a
 * KThreesControlPlane, control-plane Machines {@code edge-cp-0/1} (nodes cp-0, cp-1), two
 * MachineDeployments {@code md-a}, {@code md-b} of two workers each (nodes md-a-0 ...), the SSH and
 * kubeconfig Secrets, the release catalogue ConfigMap, and the Nodes, which the kubeconfig (pointing
 * at the same mock server) shows as the workload cluster's.
 */
final class TestEstate {
  static final String NAMESPACE = "fleet";
  static final String CLUSTER = "edge";
  static final String FROM = "v1.30.5+k3s1";
  static final String TO = "v1.31.2+k3s1";
  static final String SSH_KEY = "edge-ssh-key";
  static final String KNOWN_HOSTS = "edge-known-hosts";
  static final String CATALOGUE = "k3s-releases";
  static final List<String> POOLS = List.of("md-a", "md-b");
  /** The artifact hosts a worker allows for this estate's catalogue ({@code releases.example}). */
  static final dev.inplace.activities.artifacts.ArtifactSourcePolicy ARTIFACTS =
      new dev.inplace.activities.artifacts.ArtifactSourcePolicy(java.util.Set.of("releases.example"), null,
          dev.inplace.activities.artifacts.ArtifactSourcePolicy.DEFAULT_MAX_BYTES);

  private final KubernetesClient client;
  /** The workload cluster's kubeconfig (the same server); null: a token the mock server takes. */
  private final String workloadKubeconfig;

  TestEstate(KubernetesClient client) {
    this(client, null);
  }

  /** On a real API server: {@code workloadKubeconfig} authenticates to it as the administrator. */
  TestEstate(KubernetesClient client, String workloadKubeconfig) {
    this.client = client;
    this.workloadKubeconfig = workloadKubeconfig;
  }

  TestEstate create() {
    if (workloadKubeconfig != null) {
      client.namespaces().resource(new io.fabric8.kubernetes.api.model.NamespaceBuilder().withNewMetadata()
          .withName(NAMESPACE).endMetadata().build()).serverSideApply();
    }
    Map<String, String> clusterLabel = Map.of(CapiResources.CLUSTER_NAME_LABEL, CLUSTER);
    create(CapiResources.CLUSTER, CLUSTER, clusterLabel,
        Map.of("spec", Map.of("controlPlaneRef",
            Map.of("apiGroup", CapiResources.CONTROL_PLANE_GROUP, "kind", "KThreesControlPlane", "name", CLUSTER + "-cp"))));
    create(CapiResources.KTHREES_CONTROL_PLANE, CLUSTER + "-cp", clusterLabel, Map.of("spec", Map.of("version", FROM)));
    int address = 10;
    for (String node : FakeControlPlaneUpgrade.NODES) {
      Map<String, String> labels = new LinkedHashMap<>(clusterLabel);
      labels.put(CapiResources.CONTROL_PLANE_LABEL, "");
      machine(CLUSTER + "-" + node, node, labels, "10.0.0." + address++);
    }
    for (String pool : POOLS) {
      create(CapiResources.MACHINE_DEPLOYMENT, pool, clusterLabel,
          Map.of("spec", Map.of("replicas", 2, "template", Map.of("spec", Map.of("version", FROM)))));
      for (String node : FakeWorkersUpgrade.nodes(pool)) {
        Map<String, String> labels = new LinkedHashMap<>(clusterLabel);
        labels.put(CapiResources.DEPLOYMENT_NAME_LABEL, pool);
        machine(CLUSTER + "-" + node, node, labels, "10.0.0." + address++);
      }
    }
    secret(SSH_KEY, "ssh-privatekey", "not a real key");
    secret(KNOWN_HOSTS, "known_hosts", "10.0.0.10 ssh-ed25519 AAAA");
    secret(CLUSTER + "-kubeconfig", "value", kubeconfig());
    catalogue(TO);
    return this;
  }

  private void machine(String name, String node, Map<String, String> labels, String address) {
    create(CapiResources.MACHINE, name, labels,
        Map.of(
            "spec", Map.of("clusterName", CLUSTER, "version", FROM),
            "status", Map.of(
                "nodeRef", Map.of("name", node),
                "addresses", List.of(Map.of("type", "InternalIP", "address", address)),
                "nodeInfo", Map.of("kubeletVersion", FROM))));
    setKubelet(node, FROM);
  }

  /** What the workload cluster's Node reports (the inventory reads it from there). */
  void setKubelet(String node, String version) {
    if (workloadKubeconfig != null) {
      // A real server keeps a Node's status only through its status subresource.
      client.nodes().resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build()).serverSideApply();
      client.nodes().withName(node).editStatus(n -> {
        n.setStatus(new io.fabric8.kubernetes.api.model.NodeStatusBuilder().withNewNodeInfo().withKubeletVersion(version)
            .endNodeInfo().build());
        return n;
      });
      return;
    }
    client.nodes().resource(
            new NodeBuilder()
                .withNewMetadata().withName(node).endMetadata()
                .withNewStatus().withNewNodeInfo().withKubeletVersion(version).endNodeInfo().endStatus()
                .build())
        .createOr(r -> r.update());
  }

  void catalogue(String... versions) {
    StringBuilder releases = new StringBuilder();
    for (String version : versions) {
      if (releases.length() > 0) {
        releases.append(',');
      }
      releases.append(release(version, "https://releases.example/" + version + "/k3s", "/usr/local/bin/k3s"));
    }
    catalogueJson(CatalogueReference.DEFAULT_KEY, "{\"releases\":[" + releases + "]}");
  }

  /** A catalogue of one k3s release whose binary comes from {@code source} and goes to {@code installPath}. */
  static String releases(String version, String source, String installPath) {
    return "{\"releases\":[" + release(version, source, installPath) + "]}";
  }

  private static String release(String version, String source, String installPath) {
    return """
        {"version":"%s","distribution":"K3S","arch":"amd64","artifacts":[
          {"name":"k3s","kind":"BINARY","source":"%s",
           "sha256":"%s","sizeBytes":67108864,"installPath":"%s","mode":"0755"}]}"""
        .formatted(version, source, "ab".repeat(32), installPath);
  }

  /** The catalogue ConfigMap with {@code json} as its only data key {@code key}. */
  void catalogueJson(String key, String json) {
    client.configMaps().inNamespace(NAMESPACE).resource(
            new ConfigMapBuilder()
                .withNewMetadata().withName(CATALOGUE).endMetadata()
                .addToData(key, json)
                .build())
        .createOr(r -> r.update());
  }

  void deleteSecret(String name) {
    client.secrets().inNamespace(NAMESPACE).withName(name).delete();
  }

  /** An administrator's InplaceHostProfile (cluster-scoped). */
  void hostProfile(String name, dev.inplace.worker.crd.HostLayoutSpec layout) {
    client.resource(dev.inplace.worker.crd.InplaceHostProfile.of(name, layout)).create();
  }

  private String kubeconfig() {
    if (workloadKubeconfig != null) {
      return workloadKubeconfig;
    }
    return """
        apiVersion: v1
        kind: Config
        clusters:
        - name: workload
          cluster:
            server: %s
        contexts:
        - name: workload
          context:
            cluster: workload
            user: admin
        current-context: workload
        users:
        - name: admin
          user:
            token: test-token
        """.formatted(client.getConfiguration().getMasterUrl());
  }

  /** Secret {@code name} with {@code value} as its only data key {@code key}. */
  void secret(String name, String key, String value) {
    client.secrets().inNamespace(NAMESPACE).resource(
            new SecretBuilder()
                .withNewMetadata().withName(name).endMetadata()
                .addToData(key, Base64.getEncoder().encodeToString(value.getBytes(StandardCharsets.UTF_8)))
                .build())
        .createOr(r -> r.update());
  }

  /** Makes Cluster {@code fleet/edge} a ClusterClass cluster: {@code spec.topology} with class and version. */
  @SuppressWarnings("unchecked")
  void topology(String clusterClass) {
    client.genericKubernetesResources(CapiResources.CLUSTER).inNamespace(NAMESPACE).withName(CLUSTER).edit(c -> {
      Map<String, Object> spec = new LinkedHashMap<>((Map<String, Object>) c.getAdditionalProperties().get("spec"));
      spec.put("topology", Map.of("class", clusterClass, "version", FROM));
      c.setAdditionalProperty("spec", spec);
      return c;
    });
  }

  private void create(ResourceDefinitionContext type, String name, Map<String, String> labels, Map<String, Object> body) {
    GenericKubernetesResource resource =
        new GenericKubernetesResourceBuilder()
            .withApiVersion(type.getGroup() + "/" + type.getVersion())
            .withKind(type.getKind())
            .withMetadata(new ObjectMetaBuilder().withNamespace(NAMESPACE).withName(name).withLabels(labels).build())
            .build();
    body.forEach(resource::setAdditionalProperty);
    client.genericKubernetesResources(type).inNamespace(NAMESPACE).resource(resource).create();
  }

  // ---- the custom resources ---------------------------------------------------------------------

  static <S extends UpgradeSpec<S>> S spec(S spec) {
    return spec.setClusterName(CLUSTER)
        .setVersion(TO)
        .setReleaseCatalogue(new CatalogueReference(CATALOGUE, null))
        .setSsh(new SshSpec().setPrivateKeySecret(SSH_KEY).setKnownHostsSecret(KNOWN_HOSTS));
  }

  static ControlPlaneUpgrade controlPlaneUpgrade(String name, ControlPlaneUpgradeSpec spec) {
    return ControlPlaneUpgrade.of(NAMESPACE, name, spec);
  }

  static WorkersUpgrade workersUpgrade(String name, WorkersUpgradeSpec spec) {
    return WorkersUpgrade.of(NAMESPACE, name, spec);
  }
}
