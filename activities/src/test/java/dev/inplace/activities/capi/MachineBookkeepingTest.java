package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.CapiFixtures.NS;
import static org.junit.jupiter.api.Assertions.assertEquals;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.activities.kube.KubeClients;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordResult;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.NodeRole;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * recordMachineUpgrade: for a kubeadm control plane the exact patches, in order (KubeadmConfig,
 * InfraMachine, then the Machine's annotation with its version), that they make each object what
 * KubeadmControlPlane compares, and that a second run patches nothing; elsewhere only the version.
 */
@EnableKubernetesMockClient(crud = true, https = false)
class MachineBookkeepingTest {
  private static final ObjectMapper JSON = new ObjectMapper();
  private static final String OLD = "v1.30.6";
  private static final String NEW = "v1.31.2";
  private static final String CONFIGS = "/apis/bootstrap.cluster.x-k8s.io/v1beta2/namespaces/capi-system/kubeadmconfigs/";
  private static final String METAL3 = "/apis/infrastructure.cluster.x-k8s.io/v1beta1/namespaces/capi-system/metal3machines/";
  private static final String MACHINES = "/apis/cluster.x-k8s.io/v1beta2/namespaces/capi-system/machines/";
  private static final String CLUSTER_CONFIGURATION =
      "{\"apiServer\":{\"extraArgs\":[{\"name\":\"audit-log-maxage\",\"value\":\"30\"}]},"
          + "\"etcd\":{\"local\":{\"imageTag\":\"3.5.15-0\"}}}";
  private static final String CLUSTER_CONFIGURATION_PATCH =
      "\"controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration\":"
          + JSON.valueToTree(CLUSTER_CONFIGURATION).toString();

  KubernetesMockServer server;
  KubernetesClient client;

  private final RequestLog sent = new RequestLog();
  private KubernetesClient recording;
  private ClusterApiActivitiesImpl activities;

  @BeforeEach
  void setUp() {
    recording = sent.client(client);
    activities = new ClusterApiActivitiesImpl(new KubeClients(recording));
    CapiFixtures.installMetal3MachineCrd(client);
    CapiFixtures.load(client, "kubeadm-cluster.yaml");
  }

  @AfterEach
  void tearDown() {
    recording.close();
  }

  private MachineRecordResult record(String machine, NodeRole role, Distribution distribution) {
    return activities.recordMachineUpgrade(new MachineRecordRequest(NS, machine, NEW, distribution, role));
  }

  @Test
  void initialisedControlPlanePatchesKubeadmConfigThenInfraMachineThenMachineInThatOrder() throws Exception {
    MachineRecordResult result = record("k1-cp-a", NodeRole.CONTROL_PLANE, Distribution.KUBEADM);

    assertEquals(
        List.of(
            "PATCH " + CONFIGS + "k1-cp-a if-unchanged {\"metadata\":{},\"spec\":{\"format\":null,"
                + "\"clusterConfiguration\":{\"apiServer\":{\"extraArgs\":[{\"name\":\"audit-log-maxage\",\"value\":\"30\"}]},"
                + "\"etcd\":{\"local\":{\"imageTag\":\"3.5.15-0\"}}},"
                + "\"files\":[{\"path\":\"/etc/kubernetes/audit.yaml\",\"content\":\"rules: []\"}]}}",
            "PATCH " + METAL3 + "k1-cp-a {\"metadata\":{\"annotations\":{"
                + "\"cluster.x-k8s.io/cloned-from-name\":\"k1-control-plane-v2\","
                + "\"cluster.x-k8s.io/cloned-from-groupkind\":\"Metal3MachineTemplate.infrastructure.cluster.x-k8s.io\"}}}",
            "PATCH " + MACHINES + "k1-cp-a if-unchanged {\"metadata\":{\"annotations\":{" + CLUSTER_CONFIGURATION_PATCH
                + "}},\"spec\":{\"version\":\"" + NEW + "\"}}"),
        sent.patches());
    assertEquals(
        List.of(
            "KubeadmConfig capi-system/k1-cp-a spec = KubeadmControlPlane k1-control-plane spec.kubeadmConfigSpec"
                + " (format, clusterConfiguration, files)",
            "Metal3Machine capi-system/k1-cp-a cloned-from Metal3MachineTemplate.infrastructure.cluster.x-k8s.io"
                + " k1-control-plane-v2",
            "Machine capi-system/k1-cp-a controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration, spec.version "
                + OLD + " -> " + NEW),
        result.patches());
    assertEquals(OLD, result.previousVersion());

    JsonNode config = spec(CapiResources.KUBEADM_CONFIG, "k1-cp-a");
    JsonNode expected = JSON.valueToTree(
        ResourceFields.at(CapiFixtures.get(client, CapiResources.KUBEADM_CONTROL_PLANE, "k1-control-plane"),
            "spec", "kubeadmConfigSpec"));
    ((com.fasterxml.jackson.databind.node.ObjectNode) expected).remove("joinConfiguration");
    assertEquals(expected, withoutNulls(config), "KubeadmConfig spec = KCP kubeadmConfigSpec with its init kept");
    GenericKubernetesResource machine = CapiFixtures.get(client, CapiResources.MACHINE, "k1-cp-a");
    assertEquals(NEW, ResourceFields.string(machine, "spec", "version"));
    assertEquals(JSON.readTree(CLUSTER_CONFIGURATION), JSON.readTree(ResourceFields.annotation(machine,
        "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration")));
  }

  @Test
  void aSecondRunPatchesNothing() {
    record("k1-cp-a", NodeRole.CONTROL_PLANE, Distribution.KUBEADM);
    sent.take();

    MachineRecordResult again = record("k1-cp-a", NodeRole.CONTROL_PLANE, Distribution.KUBEADM);

    assertEquals(List.of(), again.patches());
    assertEquals(List.of(), sent.patches());
  }

  @Test
  void aJoinedControlPlaneKeepsItsJoinConfigurationAndGetsNoInitConfiguration() {
    record("k1-cp-b", NodeRole.CONTROL_PLANE, Distribution.KUBEADM);

    JsonNode config = withoutNulls(spec(CapiResources.KUBEADM_CONFIG, "k1-cp-b"));
    assertEquals(null, config.get("initConfiguration"));
    assertEquals("node-labels",
        config.path("joinConfiguration").path("nodeRegistration").path("kubeletExtraArgs").path(0).path("name").asText());
    assertEquals("k1-control-plane-v2", ResourceFields.annotation(
        CapiFixtures.get(client, CapiFixtures.METAL3_MACHINE, "k1-cp-b"), "cluster.x-k8s.io/cloned-from-name"));
  }

  @Test
  void aKubeadmWorkerOnlyGetsItsVersion() {
    MachineRecordResult result = record("k1-md-0-w1", NodeRole.WORKER, Distribution.KUBEADM);

    assertEquals(
        List.of("PATCH " + MACHINES + "k1-md-0-w1 if-unchanged {\"metadata\":{},\"spec\":{\"version\":\"" + NEW + "\"}}"),
        sent.patches());
    assertEquals(List.of("Machine capi-system/k1-md-0-w1 spec.version " + OLD + " -> " + NEW), result.patches());
  }

  @Test
  void aK3sControlPlaneOnlyGetsItsVersion() {
    record("k1-cp-a", NodeRole.CONTROL_PLANE, Distribution.K3S);

    assertEquals(
        List.of("PATCH " + MACHINES + "k1-cp-a if-unchanged {\"metadata\":{},\"spec\":{\"version\":\"" + NEW + "\"}}"),
        sent.patches());
  }

  private JsonNode spec(io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext type, String name) {
    return JSON.valueToTree(ResourceFields.at(CapiFixtures.get(client, type, name), "spec"));
  }

  /** The mock server keeps keys a merge patch set to null; a real API server drops them. */
  private static JsonNode withoutNulls(JsonNode node) {
    if (node.isObject()) {
      com.fasterxml.jackson.databind.node.ObjectNode copy = JSON.createObjectNode();
      node.fields().forEachRemaining(e -> {
        if (!e.getValue().isNull()) {
          copy.set(e.getKey(), withoutNulls(e.getValue()));
        }
      });
      return copy;
    }
    return node;
  }
}
