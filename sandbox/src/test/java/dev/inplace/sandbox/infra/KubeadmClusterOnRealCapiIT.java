package dev.inplace.sandbox.infra;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.testbed.CapiManagers;
import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestCa;
import dev.inplace.testbed.TestbedBinaries;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.awaitility.Awaitility;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real Cluster API controllers (core, KubeadmControlPlane, kubeadm bootstrap) on the test bed's
 * real management API server provision a kubeadm cluster through the sandbox's infrastructure
 * provider: three control-plane Machines and a MachineDeployment of two, every Machine Running with
 * its Node on the real workload API server, the control plane initialized and its Machines healthy.
 * The ground every in-place proof on real CAPI stands on.
 */
@Timeout(600)
class KubeadmClusterOnRealCapiIT {
  static final String NS = "fleet";
  static final String CLUSTER = "edge-1";
  static final String VERSION = "v1.30.6";
  static final ResourceDefinitionContext MACHINES = core("Machine", "machines");
  static final ResourceDefinitionContext KCP = new ResourceDefinitionContext.Builder().withGroup("controlplane.cluster.x-k8s.io")
      .withVersion("v1beta2").withKind("KubeadmControlPlane").withPlural("kubeadmcontrolplanes").withNamespaced(true).build();
  static final ResourceDefinitionContext MD = core("MachineDeployment", "machinedeployments");

  @TempDir static Path dir;
  static KubeControlPlane management;
  static KubeControlPlane workload;
  static CapiManagers capi;
  static KubernetesClient mgmt;
  static KubernetesClient wl;
  static SandboxInfraProvider provider;

  @BeforeAll
  static void startTestBed() throws Exception {
    TestbedBinaries binaries = TestbedBinaries.locate();
    management = KubeControlPlane.start("management", dir.resolve("management"), binaries);
    workload = KubeControlPlane.start("workload", dir.resolve("workload"), binaries);
    capi = CapiManagers.start(management, dir.resolve("capi"), binaries);
    mgmt = client(management.adminKubeconfig());
    wl = client(workload.adminKubeconfig());
    int port = Integer.parseInt(workload.server().substring(workload.server().lastIndexOf(':') + 1));
    provider = SandboxInfraProvider.start(mgmt, "127.0.0.1", port, new KubeadmNodeBoot(mgmt, wl));
    seedCluster(mgmt, workload);
  }

  @AfterAll
  static void stop() {
    if (provider != null) {
      provider.close();
    }
    for (AutoCloseable c : new AutoCloseable[] {mgmt, wl, capi, workload, management}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // best effort
      }
    }
  }

  @Test
  void realControllersProvisionEveryMachineWithItsNodeOnTheWorkloadServer() {
    try {
      Awaitility.await().atMost(Duration.ofMinutes(6)).pollInterval(Duration.ofSeconds(2)).until(() -> {
        List<GenericKubernetesResource> machines = mgmt.genericKubernetesResources(MACHINES).inNamespace(NS).list().getItems();
        return machines.size() == 5 && machines.stream().allMatch(m -> "Running".equals(status(m).get("phase")));
      });
    } catch (org.awaitility.core.ConditionTimeoutException e) {
      throw new AssertionError("Machines not all Running: " + summary() + "\n" + capi.tails(), e);
    }
    List<GenericKubernetesResource> machines = mgmt.genericKubernetesResources(MACHINES).inNamespace(NS).list().getItems();
    for (GenericKubernetesResource m : machines) {
      String node = String.valueOf(((Map<?, ?>) status(m).get("nodeRef")).get("name"));
      assertEquals(SandboxInfraProvider.providerId(NS, m.getMetadata().getName()), wl.nodes().withName(node).get().getSpec().getProviderID());
      assertEquals(VERSION, spec(m).get("version"));
    }
    GenericKubernetesResource kcp = mgmt.genericKubernetesResources(KCP).inNamespace(NS).withName(CLUSTER + "-control-plane").get();
    assertEquals(Boolean.TRUE, ((Map<?, ?>) status(kcp).get("initialization")).get("controlPlaneInitialized"));
    Awaitility.await().atMost(Duration.ofMinutes(2)).pollInterval(Duration.ofSeconds(2)).untilAsserted(() -> {
      GenericKubernetesResource now = mgmt.genericKubernetesResources(KCP).inNamespace(NS).withName(CLUSTER + "-control-plane").get();
      assertEquals(3, ((Number) status(now).getOrDefault("readyReplicas", 0)).intValue(), "KCP ready replicas: " + status(now));
      GenericKubernetesResource md = mgmt.genericKubernetesResources(MD).inNamespace(NS).withName(CLUSTER + "-md-0").get();
      assertEquals(2, ((Number) status(md).getOrDefault("readyReplicas", 0)).intValue(), "MD ready replicas: " + status(md));
    });
    assertTrue(capi.allAlive(), "every Cluster API manager still runs");
  }

  /**
   * Seeds the kubeadm cluster on {@code mgmt}: the CA and external-etcd Secrets from {@code workload},
   * the sandbox infrastructure, a KubeadmControlPlane of 3 (maxSurge 0) and a MachineDeployment of 2,
   * all at {@link #VERSION}.
   */
  static void seedCluster(KubernetesClient mgmt, KubeControlPlane workload) throws Exception {
    mgmt.namespaces().resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build()).serverSideApply();
    // The workload API server trusts this CA: KCP signs the cluster's admin kubeconfig with it.
    secret(mgmt, CLUSTER + "-ca", Map.of("tls.crt", Files.readString(workload.ca().certificate()), "tls.key", Files.readString(workload.ca().key())));
    // External etcd (the workload server's own): KCP then checks no etcd pods or members, which it would
    // reach through a kubelet's port-forward (docs/testbed.md).
    secret(mgmt, CLUSTER + "-etcd", Map.of("tls.crt", Files.readString(workload.ca().certificate())));
    TestCa.Issued etcdClient = workload.ca().client("apiserver-etcd-client", "kube-apiserver-etcd-client");
    secret(mgmt, CLUSTER + "-apiserver-etcd-client", Map.of("tls.crt", Files.readString(etcdClient.cert()), "tls.key", Files.readString(etcdClient.key())));

    apply(mgmt, infra("SandboxCluster", CLUSTER, Map.of()));
    apply(mgmt, infra("SandboxMachineTemplate", CLUSTER + "-cp", Map.of("template", Map.of("spec", Map.of()))));
    apply(mgmt, infra("SandboxMachineTemplate", CLUSTER + "-md-0", Map.of("template", Map.of("spec", Map.of()))));
    apply(mgmt, object("bootstrap.cluster.x-k8s.io/v1beta2", "KubeadmConfigTemplate", CLUSTER + "-md-0",
        Map.of("template", Map.of("spec", Map.of("format", "cloud-config")))));
    apply(mgmt, object("cluster.x-k8s.io/v1beta2", "Cluster", CLUSTER, Map.of(
        "infrastructureRef", Map.of("apiGroup", SandboxInfraCrds.GROUP, "kind", "SandboxCluster", "name", CLUSTER),
        "controlPlaneRef", Map.of("apiGroup", "controlplane.cluster.x-k8s.io", "kind", "KubeadmControlPlane", "name", CLUSTER + "-control-plane"))));
    Map<String, Object> external = Map.of("endpoints", List.of("https://127.0.0.1:2379"), "caFile", "/etc/kubernetes/pki/etcd/ca.crt",
        "certFile", "/etc/kubernetes/pki/apiserver-etcd-client.crt", "keyFile", "/etc/kubernetes/pki/apiserver-etcd-client.key");
    apply(mgmt, object("controlplane.cluster.x-k8s.io/v1beta2", "KubeadmControlPlane", CLUSTER + "-control-plane", Map.of(
        "replicas", 3, "version", VERSION,
        "machineTemplate", Map.of("spec", Map.of("infrastructureRef",
            Map.of("apiGroup", SandboxInfraCrds.GROUP, "kind", "SandboxMachineTemplate", "name", CLUSTER + "-cp"))),
        "kubeadmConfigSpec", Map.of("clusterConfiguration", Map.of("etcd", Map.of("external", external))),
        "rollout", Map.of("strategy", Map.of("type", "RollingUpdate", "rollingUpdate", Map.of("maxSurge", 0))))));
    apply(mgmt, object("cluster.x-k8s.io/v1beta2", "MachineDeployment", CLUSTER + "-md-0", Map.of(
        "clusterName", CLUSTER, "replicas", 2,
        "template", Map.of("spec", Map.of("clusterName", CLUSTER, "version", VERSION,
            "bootstrap", Map.of("configRef", Map.of("apiGroup", "bootstrap.cluster.x-k8s.io", "kind", "KubeadmConfigTemplate", "name", CLUSTER + "-md-0")),
            "infrastructureRef", Map.of("apiGroup", SandboxInfraCrds.GROUP, "kind", "SandboxMachineTemplate", "name", CLUSTER + "-md-0"))))));
  }

  static String summary() {
    StringBuilder out = new StringBuilder();
    for (GenericKubernetesResource m : mgmt.genericKubernetesResources(MACHINES).inNamespace(NS).list().getItems()) {
      out.append('\n').append(m.getMetadata().getName()).append(": ").append(status(m));
    }
    GenericKubernetesResource kcp = mgmt.genericKubernetesResources(KCP).inNamespace(NS).withName(CLUSTER + "-control-plane").get();
    out.append("\nKCP: ").append(kcp == null ? "none" : status(kcp));
    return out.toString();
  }

  static void secret(KubernetesClient mgmt, String name, Map<String, String> data) {
    Map<String, String> encoded = new LinkedHashMap<>();
    data.forEach((k, v) -> encoded.put(k, Base64.getEncoder().encodeToString(v.getBytes(StandardCharsets.UTF_8))));
    mgmt.secrets().inNamespace(NS).resource(new SecretBuilder().withMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS)
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
    r.setMetadata(new ObjectMetaBuilder().withName(name).withNamespace(NS).withLabels(Map.of("cluster.x-k8s.io/cluster-name", CLUSTER)).build());
    r.setAdditionalProperty("spec", spec);
    return r;
  }

  static void apply(KubernetesClient mgmt, GenericKubernetesResource r) {
    mgmt.resource(r).inNamespace(NS).create();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> status(GenericKubernetesResource r) {
    Object s = r == null ? null : r.getAdditionalProperties().get("status");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  @SuppressWarnings("unchecked")
  static Map<String, Object> spec(GenericKubernetesResource r) {
    Object s = r.getAdditionalProperties().get("spec");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  static ResourceDefinitionContext core(String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup("cluster.x-k8s.io").withVersion("v1beta2").withKind(kind)
        .withPlural(plural).withNamespaced(true).build();
  }

  static KubernetesClient client(Path kubeconfig) throws Exception {
    Config config = Config.fromKubeconfig(Files.readString(kubeconfig));
    config.setRequestRetryBackoffLimit(0);
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
