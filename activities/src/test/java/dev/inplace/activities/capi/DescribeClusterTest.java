package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.CapiFixtures.NS;
import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.kube.KubeClients;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterInventory.PoolInfo;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.temporal.failure.ApplicationFailure;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

@EnableKubernetesMockClient(crud = true, https = false)
class DescribeClusterTest {
  private static final ClusterRef C1 = new ClusterRef(NS, "c1");
  private static final String V = "v1.30.4+k3s1";

  KubernetesMockServer server;
  KubernetesClient client;

  private ClusterApiActivitiesImpl activities;

  @BeforeEach
  void setUp() {
    activities = new ClusterApiActivitiesImpl(new KubeClients(client));
    CapiFixtures.load(client, "k3s-cluster.yaml");
  }

  @Test
  void kubeletVersionsComeFromTheNodesNotTheMachinesDelayedMirror() {
    dev.inplace.activities.kube.KubeFixtures.createKubeconfigSecret(
        client, C1, dev.inplace.activities.kube.KubeFixtures.kubeconfig(server.url("/")));
    client.nodes().resource(new io.fabric8.kubernetes.api.model.NodeBuilder()
        .withNewMetadata().withName("cp-a").endMetadata()
        .withNewStatus().withNewNodeInfo().withKubeletVersion("v1.31.9+k3s1").endNodeInfo().endStatus()
        .build()).create();

    ClusterInventory inventory = activities.describeCluster(C1);

    MachineInfo cpA = inventory.machines().stream().filter(m -> m.nodeName().equals("cp-a")).findFirst().orElseThrow();
    assertEquals("v1.31.9+k3s1", cpA.kubeletVersion());
    MachineInfo cpB = inventory.machines().stream().filter(m -> m.nodeName().equals("cp-b")).findFirst().orElseThrow();
    assertEquals(V, cpB.kubeletVersion(), "a Machine without a Node keeps its mirrored version");
  }

  @Test
  void describesControlPlaneMachinesInNaturalOrderAndPoolsWithTheirNewestMachineSet() {
    ClusterInventory inventory = activities.describeCluster(C1);

    assertEquals(
        new ClusterInventory(
            C1,
            new ObjectRef(
                "controlplane.cluster.x-k8s.io", "KThreesControlPlane", "c1-control-plane"),
            V,
            List.of(
                new MachineInfo(
                    "c1-control-plane-9fz4m",
                    "cp-a",
                    NodeRole.CONTROL_PLANE,
                    "10.0.0.10",
                    V,
                    V,
                    ""),
                new MachineInfo(
                    "c1-control-plane-b2lkn",
                    "cp-b",
                    NodeRole.CONTROL_PLANE,
                    "10.0.0.11",
                    V,
                    V,
                    ""),
                new MachineInfo(
                    "c1-control-plane-x7k2q",
                    "cp-c",
                    NodeRole.CONTROL_PLANE,
                    "10.0.0.12",
                    V,
                    V,
                    ""),
                new MachineInfo(
                    "c1-md-0-worker-2",
                    "worker-2",
                    NodeRole.WORKER,
                    "10.0.1.2",
                    "v1.30.3+k3s1",
                    "v1.30.3+k3s1",
                    "c1-md-0"),
                new MachineInfo(
                    "c1-md-0-worker-10",
                    "worker-10",
                    NodeRole.WORKER,
                    "203.0.113.30",
                    V,
                    "",
                    "c1-md-0")),
            List.of(
                new PoolInfo("c1-md-0", "c1-md-0-8c6b4", V, 2), new PoolInfo("c1-md-1", "", V, 0))),
        inventory);
  }

  @Test
  void readsAKubeadmControlPlaneAndAV1beta1StyleReference() {
    CapiFixtures.create(
        client,
        object(
            "KubeadmControlPlane",
            "kcp",
            Map.of(),
            Map.of("spec", Map.of("replicas", 1, "version", "v1.31.2"))));
    client
        .genericKubernetesResources(CapiResources.CLUSTER)
        .inNamespace(NS)
        .withName("c1")
        .edit(
            c -> {
              c.setAdditionalProperty(
                  "spec",
                  Map.of(
                      "controlPlaneRef",
                      Map.of(
                          "apiVersion", "controlplane.cluster.x-k8s.io/v1beta1",
                          "kind", "KubeadmControlPlane",
                          "name", "kcp")));
              return c;
            });

    ClusterInventory inventory = activities.describeCluster(C1);

    assertEquals(
        new ObjectRef("controlplane.cluster.x-k8s.io", "KubeadmControlPlane", "kcp"),
        inventory.controlPlane());
    assertEquals("v1.31.2", inventory.controlPlaneVersion());
  }

  @Test
  void missingClusterIsClusterNotFoundNamingIt() {
    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.CLUSTER_NOT_FOUND,
            () -> activities.describeCluster(new ClusterRef(NS, "ghost")));

    assertTrue(failure.isNonRetryable());
    assertTrue(
        failure.getOriginalMessage().contains("capi-system/ghost"), failure.getOriginalMessage());
  }

  @Test
  void aClusterClassClusterIsTopologyManagedSoAHandStartedParentIsRefused() {
    GenericKubernetesResource cluster =
        client.genericKubernetesResources(CapiResources.CLUSTER).inNamespace(NS).withName("c1").get();
    @SuppressWarnings("unchecked")
    Map<String, Object> spec = (Map<String, Object>) cluster.getAdditionalProperties().get("spec");
    spec.put("topology", Map.of("classRef", Map.of("name", "k3s-edge"), "version", V));
    client.genericKubernetesResources(CapiResources.CLUSTER).inNamespace(NS).resource(cluster).update();

    ApplicationFailure failure =
        assertFailure(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, () -> activities.describeCluster(C1));

    assertTrue(failure.isNonRetryable());
    assertEquals("Cluster capi-system/c1 is managed by ClusterClass k3s-edge (spec.topology, version " + V
        + "): its topology controller owns the control-plane and MachineDeployment versions; the custom resources"
        + " do not upgrade ClusterClass clusters: change spec.topology.version, and CAPI's in-place update hooks"
        + " call inplace's runtime extension for each Machine (docs/capi-extension.md)", failure.getOriginalMessage());
  }

  @Test
  void machineWithoutNodeRefIsInvalidRequest() {
    CapiFixtures.create(
        client,
        object(
            "Machine",
            "c1-md-0-worker-3",
            Map.of("cluster.x-k8s.io/cluster-name", "c1"),
            Map.of("spec", Map.of("version", V), "status", Map.of("phase", "Provisioning"))));

    ApplicationFailure failure =
        assertFailure(UpgradeFailures.INVALID_REQUEST, () -> activities.describeCluster(C1));

    assertTrue(failure.isNonRetryable());
    assertEquals(
        "Machine capi-system/c1-md-0-worker-3 has no Node yet (status.nodeRef is not set)",
        failure.getOriginalMessage());
  }

  @Test
  void machineWithoutAnIpAddressIsInvalidRequest() {
    CapiFixtures.create(
        client,
        object(
            "Machine",
            "c1-md-0-worker-3",
            Map.of("cluster.x-k8s.io/cluster-name", "c1"),
            Map.of(
                "status",
                Map.of(
                    "nodeRef", Map.of("name", "worker-3"),
                    "addresses", List.of(Map.of("type", "Hostname", "address", "worker-3"))))));

    ApplicationFailure failure =
        assertFailure(UpgradeFailures.INVALID_REQUEST, () -> activities.describeCluster(C1));

    assertEquals(
        "Machine capi-system/c1-md-0-worker-3 has no InternalIP or ExternalIP in status.addresses",
        failure.getOriginalMessage());
  }

  @Test
  void clusterWithoutControlPlaneRefIsInvalidRequest() {
    CapiFixtures.create(client, object("Cluster", "bare", Map.of(), Map.of("spec", Map.of())));

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.INVALID_REQUEST,
            () -> activities.describeCluster(new ClusterRef(NS, "bare")));

    assertTrue(
        failure
            .getOriginalMessage()
            .contains("capi-system/bare has no complete spec.controlPlaneRef"),
        failure.getOriginalMessage());
  }

  @Test
  void unsupportedControlPlaneKindIsInvalidRequest() {
    CapiFixtures.create(
        client,
        object(
            "Cluster",
            "rke",
            Map.of(),
            Map.of(
                "spec",
                Map.of(
                    "controlPlaneRef",
                    Map.of(
                        "apiGroup", "controlplane.cluster.x-k8s.io",
                        "kind", "RKE2ControlPlane",
                        "name", "rke")))));

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.INVALID_REQUEST,
            () -> activities.describeCluster(new ClusterRef(NS, "rke")));

    assertTrue(failure.getOriginalMessage().contains("RKE2ControlPlane rke is not supported"));
  }

  @Test
  void missingControlPlaneObjectIsInvalidRequest() {
    client
        .genericKubernetesResources(CapiResources.KTHREES_CONTROL_PLANE)
        .inNamespace(NS)
        .withName("c1-control-plane")
        .delete();

    ApplicationFailure failure =
        assertFailure(UpgradeFailures.INVALID_REQUEST, () -> activities.describeCluster(C1));

    assertEquals(
        "KThreesControlPlane capi-system/c1-control-plane (the control plane of Cluster"
            + " capi-system/c1) not found",
        failure.getOriginalMessage());
  }

  private static GenericKubernetesResource object(
      String kind, String name, Map<String, String> labels, Map<String, Object> fields) {
    GenericKubernetesResource object = new GenericKubernetesResource();
    object.setApiVersion(CapiFixtures.type(kind).getGroup() + "/v1beta2");
    object.setKind(kind);
    object.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withNamespace(NS)
            .withName(name)
            .withLabels(labels)
            .build());
    fields.forEach(object::setAdditionalProperty);
    return object;
  }
}
