package dev.inplace.sandbox.infra;

import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestCa;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The objects a user applies to create a kubeadm cluster with Cluster API on the sandbox's
 * infrastructure: the cluster's CA and external-etcd Secrets (from the workload API server the
 * cluster's Nodes register with), a SandboxCluster and machine templates, a KubeadmControlPlane
 * (maxSurge 0) and a MachineDeployment (maxSurge 0, maxUnavailable 1), all at one version.
 *
 * <p>External etcd (the workload server's own): KubeadmControlPlane then checks no etcd pods or
 * members, which it would reach through a kubelet's port-forward (docs/testbed.md).
 */
public final class KubeadmClusterSeed {
  public static final String NAMESPACE = "fleet";
  public static final String CLUSTER = "edge-1";
  public static final String CONTROL_PLANE = CLUSTER + "-control-plane";
  public static final String MACHINE_DEPLOYMENT = CLUSTER + "-md-0";

  private KubeadmClusterSeed() {}

  /** Creates the cluster on {@code mgmt}, its Nodes to register with {@code workload}. */
  public static void seed(KubernetesClient mgmt, KubeControlPlane workload, String version, int controlPlanes, int workers)
      throws IOException {
    secrets(mgmt, workload);
    create(mgmt, infra("SandboxCluster", CLUSTER, Map.of()));
    create(mgmt, infra("SandboxMachineTemplate", CLUSTER + "-cp", Map.of("template", Map.of("spec", Map.of()))));
    create(mgmt, infra("SandboxMachineTemplate", MACHINE_DEPLOYMENT, Map.of("template", Map.of("spec", Map.of()))));
    create(mgmt, object("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", MACHINE_DEPLOYMENT,
        Map.of("template", Map.of("spec", Map.of("format", "cloud-config")))));
    create(mgmt, object("cluster.x-k8s.io/v1beta2", "Cluster", CLUSTER, Map.of(
        "infrastructureRef", Map.of("apiGroup", SandboxInfraCrds.GROUP, "kind", "SandboxCluster", "name", CLUSTER),
        "controlPlaneRef", Map.of("apiGroup", "controlplane.cluster.x-k8s.io", "kind", "KubeadmControlPlane", "name", CONTROL_PLANE))));
    create(mgmt, object("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", CONTROL_PLANE, Map.of(
        "replicas", controlPlanes, "version", version,
        "machineTemplate", Map.of("spec", Map.of("infrastructureRef",
            Map.of("apiGroup", SandboxInfraCrds.GROUP, "kind", "SandboxMachineTemplate", "name", CLUSTER + "-cp"))),
        "kubeadmConfigSpec", externalEtcd(),
        "rollout", Map.of("strategy", Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxSurge", 0))))));
    // In place, not by surge: the MachineDeployment creates no Machine when one may be unavailable.
    create(mgmt, object("cluster.x-k8s.io/v1beta2", "MachineDeployment", MACHINE_DEPLOYMENT, Map.of(
        "clusterName", CLUSTER, "replicas", workers,
        "rollout", Map.of("strategy", Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxSurge", 0, "maxUnavailable", 1))),
        "template", Map.of("spec", Map.of("clusterName", CLUSTER, "version", version,
            "bootstrap", Map.of("configRef", Map.of("apiGroup", "bootstrap.cluster.x-k8s.io", "kind", "KubeadmConfigTemplate", "name", MACHINE_DEPLOYMENT)),
            "infrastructureRef", Map.of("apiGroup", SandboxInfraCrds.GROUP, "kind", "SandboxMachineTemplate", "name", MACHINE_DEPLOYMENT))))));
  }

  /**
   * The cluster's CA and external-etcd Secrets, from the workload API server the cluster's Nodes
   * register with, in the namespace (created when missing).
   */
  static void secrets(KubernetesClient mgmt, KubeControlPlane workload) throws IOException {
    if (mgmt.namespaces().withName(NAMESPACE).get() == null) {
      mgmt.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NAMESPACE).endMetadata().build()).create();
    }
    // The workload API server trusts this CA: KCP signs the cluster's admin kubeconfig with it.
    secret(mgmt, CLUSTER + "-ca", Map.of("tls.crt", Files.readString(workload.ca().certificate()), "tls.key", Files.readString(workload.ca().key())));
    secret(mgmt, CLUSTER + "-etcd", Map.of("tls.crt", Files.readString(workload.ca().certificate())));
    TestCa.Issued etcdClient = workload.ca().client("apiserver-etcd-client", "kube-apiserver-etcd-client");
    secret(mgmt, CLUSTER + "-apiserver-etcd-client", Map.of("tls.crt", Files.readString(etcdClient.cert()), "tls.key", Files.readString(etcdClient.key())));

  }

  /** A KubeadmConfigSpec whose etcd is the workload API server's own (external to the Machines). */
  static Map<String, Object> externalEtcd() {
    return Map.of("clusterConfiguration", Map.of("etcd", Map.of("external", Map.of(
        "endpoints", List.of("https://127.0.0.1:2379"), "caFile", "/etc/kubernetes/pki/etcd/ca.crt",
        "certFile", "/etc/kubernetes/pki/apiserver-etcd-client.crt", "keyFile", "/etc/kubernetes/pki/apiserver-etcd-client.key"))));
  }

  static void secret(KubernetesClient mgmt, String name, Map<String, String> data) {
    Map<String, String> encoded = new LinkedHashMap<>();
    data.forEach((k, v) -> encoded.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    mgmt.secrets().inNamespace(NAMESPACE).resource(new SecretBuilder().withMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NAMESPACE)
        .withLabels(Map.of("cluster.x-k8s.io/cluster-name", CLUSTER)).build())
        .withType("cluster.x-k8s.io/secret").withData(encoded).build()).serverSideApply();
  }

  static GenericKubernetesResource infra(String kind, String name, Map<String, Object> spec) {
    return object(SandboxInfraCrds.GROUP + "/" + SandboxInfraCrds.VERSION, kind, name, spec);
  }

  static GenericKubernetesResource object(String apiVersion, String kind, String name, Map<String, Object> spec) {
    GenericKubernetesResource r = new GenericKubernetesResource();
    r.setApiVersion(apiVersion);
    r.setKind(kind);
    r.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NAMESPACE)
        .withLabels(Map.of("cluster.x-k8s.io/cluster-name", CLUSTER)).build());
    r.setAdditionalProperty("spec", spec);
    return r;
  }

  static void create(KubernetesClient mgmt, GenericKubernetesResource r) {
    mgmt.resource(r).inNamespace(NAMESPACE).create();
  }
}
