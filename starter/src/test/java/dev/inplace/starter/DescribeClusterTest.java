package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import io.fabric8.kubernetes.client.server.mock.KubernetesCrudDispatcher;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.Context;
import io.fabric8.mockwebserver.MockWebServer;
import java.util.HashMap;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@code describe cluster} against two fabric8 mock API servers in CRUD mode: the management
 * cluster (CAPI objects, CRs, the kubeconfig Secret) and the workload cluster (nodes).
 */
class DescribeClusterTest {
  private final KubernetesMockServer managementServer = crudServer();
  private final KubernetesMockServer workloadServer = crudServer();
  private KubernetesClient management;
  private KubernetesClient workload;
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private static KubernetesMockServer crudServer() {
    return new KubernetesMockServer(new Context(), new MockWebServer(), new HashMap<>(), new KubernetesCrudDispatcher(), false);
  }

  @BeforeEach
  void start() {
    managementServer.init();
    workloadServer.init();
    management = managementServer.createClient();
    workload = workloadServer.createClient();
  }

  @AfterEach
  void stop() {
    management.close();
    workload.close();
    managementServer.destroy();
    workloadServer.destroy();
  }

  private int run(String... args) {
    PrintStream o = new PrintStream(out, true, StandardCharsets.UTF_8);
    CliContext context = CliContext.of(null, "q", o, 0).withKubernetes(path -> management);
    return InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8)).execute(args);
  }

  private void create(String apiVersion, String kind, String plural, String name, Map<String, String> labels,
      Map<String, Object> spec, Map<String, Object> status) {
    int slash = apiVersion.indexOf('/');
    GenericKubernetesResource r = new GenericKubernetesResourceBuilder().withApiVersion(apiVersion).withKind(kind)
        .withNewMetadata().withNamespace("default").withName(name).withLabels(labels).endMetadata().build();
    r.setAdditionalProperty("spec", spec);
    if (status != null) {
      r.setAdditionalProperty("status", status);
    }
    management.genericKubernetesResources(new ResourceDefinitionContext.Builder().withGroup(apiVersion.substring(0, slash))
        .withVersion(apiVersion.substring(slash + 1)).withKind(kind).withPlural(plural).withNamespaced(true).build())
        .resource(r).create();
  }

  private void clusterWithOneControlPlaneAndOnePool() {
    Map<String, String> member = Map.of("cluster.x-k8s.io/cluster-name", "demo");
    create("cluster.x-k8s.io/v1beta2", "Cluster", "clusters", "demo", Map.of(),
        Map.of("controlPlaneRef", Map.of("apiGroup", "controlplane.cluster.x-k8s.io",
            "kind", "KThreesControlPlane", "name", "demo-cp")), Map.of("phase", "Provisioned"));
    create("controlplane.cluster.x-k8s.io/v1beta2", "KThreesControlPlane", "kthreescontrolplanes", "demo-cp", Map.of(),
        Map.of("version", "v1.30.2+k3s1", "replicas", 1), Map.of("readyReplicas", 1));
    create("cluster.x-k8s.io/v1beta2", "MachineDeployment", "machinedeployments", "demo-md-0", member,
        Map.of("replicas", 1, "template", Map.of("spec", Map.of("version", "v1.29.6+k3s1"))), Map.of("readyReplicas", 1));
    create("cluster.x-k8s.io/v1beta2", "Machine", "machines", "demo-cp-a",
        Map.of("cluster.x-k8s.io/cluster-name", "demo", "cluster.x-k8s.io/control-plane", ""),
        Map.of("version", "v1.30.2+k3s1"), Map.of("phase", "Running", "nodeRef", Map.of("name", "cp-a")));
    create("cluster.x-k8s.io/v1beta2", "Machine", "machines", "demo-md-0-x",
        Map.of("cluster.x-k8s.io/cluster-name", "demo", "cluster.x-k8s.io/deployment-name", "demo-md-0"),
        Map.of("version", "v1.29.6+k3s1"), Map.of("phase", "Running", "nodeRef", Map.of("name", "worker-x")));
    // Another cluster's Machine in the same namespace stays out of the tree.
    create("cluster.x-k8s.io/v1beta2", "Machine", "machines", "other-m",
        Map.of("cluster.x-k8s.io/cluster-name", "other", "cluster.x-k8s.io/control-plane", ""),
        Map.of("version", "v1.28.0"), null);
    create("upgrade.inplace.dev/v1alpha1", "WorkersUpgrade", "workersupgrades", "to-1-30", Map.of(),
        Map.of("clusterName", "demo", "version", "v1.30.2+k3s1"),
        Map.of("phase", "Running", "progress", "0/1",
            "conditions", List.of(Map.of("type", "Progressing", "status", "True", "reason", "NodeUpgrading", "message", "worker-x: drain")),
            "nodes", List.of(Map.of("machine", "demo-md-0-x", "node", "worker-x", "phase", "Running", "step", "Drain",
                "workflowId", "node-upgrade/default/demo/worker-x/v1.30.2+k3s1"))));
    workload.nodes().resource(new NodeBuilder().withNewMetadata().withName("cp-a").endMetadata()
        .withNewStatus().addNewCondition().withType("Ready").withStatus("True").endCondition().endStatus().build()).create();
    workload.nodes().resource(new NodeBuilder().withNewMetadata().withName("worker-x").endMetadata()
        .withNewSpec().withUnschedulable(true).endSpec()
        .withNewStatus().addNewCondition().withType("Ready").withStatus("False").endCondition().endStatus().build()).create();
  }

  private void kubeconfigSecret(String userBlock) {
    String kubeconfig = """
        apiVersion: v1
        kind: Config
        clusters:
        - name: demo
          cluster:
            server: %s
        users:
        - name: admin
          user:
        %s
        contexts:
        - name: demo
          context: {cluster: demo, user: admin}
        current-context: demo
        """.formatted(workload.getMasterUrl().toString(), userBlock);
    management.secrets().resource(new SecretBuilder().withNewMetadata().withNamespace("default").withName("demo-kubeconfig")
        .endMetadata().addToData("value", Base64.getEncoder().encodeToString(kubeconfig.getBytes(StandardCharsets.UTF_8)))
        .build()).create();
  }

  @Test
  void jsonShowsTheTreeWithEachMachinesNodeStateInplaceStepRunIdAndTheCrConditions() throws Exception {
    clusterWithOneControlPlaneAndOnePool();
    kubeconfigSecret("    token: abc");

    assertEquals(0, run("describe", "cluster", "default/demo", "-o", "json"), err.toString());
    JsonNode tree = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));

    assertEquals("Provisioned", tree.path("phase").asText());
    assertTrue(tree.path("workloadError").isMissingNode(), tree.toString());
    JsonNode cp = tree.path("controlPlane");
    assertEquals("KThreesControlPlane", cp.path("kind").asText());
    assertEquals("v1.30.2+k3s1", cp.path("version").asText());
    assertEquals(1, cp.path("machines").size(), "another cluster's Machine is not listed");
    assertEquals("cp-a", cp.path("machines").get(0).path("node").asText());
    assertTrue(cp.path("machines").get(0).path("nodeReady").asBoolean());
    assertEquals(false, cp.path("machines").get(0).path("cordoned").asBoolean());

    JsonNode worker = tree.path("machineDeployments").get(0).path("machines").get(0);
    assertEquals("demo-md-0-x", worker.path("name").asText());
    assertEquals(false, worker.path("nodeReady").asBoolean());
    assertTrue(worker.path("cordoned").asBoolean());
    assertEquals("Drain", worker.path("step").asText());
    assertEquals("node-upgrade/default/demo/worker-x/v1.30.2+k3s1", worker.path("runId").asText());

    JsonNode upgrade = tree.path("upgrades").get(0);
    assertEquals("WorkersUpgrade", upgrade.path("kind").asText());
    assertEquals("NodeUpgrading", upgrade.path("conditions").get(0).path("reason").asText());
  }

  @Test
  void tableDrawsClusterControlPlaneMachineDeploymentAndMachinesAsATree() {
    clusterWithOneControlPlaneAndOnePool();
    kubeconfigSecret("    token: abc");

    assertEquals(0, run("describe", "cluster", "default/demo"), err.toString());
    String table = out.toString(StandardCharsets.UTF_8);
    List<String> lines = table.lines().toList();
    assertTrue(lines.get(0).startsWith("NAME"), table);
    assertTrue(lines.get(1).startsWith("Cluster/default/demo (Provisioned)"), table);
    assertTrue(lines.get(2).startsWith("├─KThreesControlPlane/demo-cp (1/1)"), table);
    assertTrue(lines.get(3).matches("│ └─Machine/demo-cp-a\\s+v1.30.2\\+k3s1\\s+cp-a\\s+True\\s+no\\s+-\\s+-\\s+-"), table);
    assertTrue(lines.get(4).startsWith("└─MachineDeployment/demo-md-0 (1/1)"), table);
    assertTrue(lines.get(5).matches("  └─Machine/demo-md-0-x\\s+v1.29.6\\+k3s1\\s+worker-x\\s+False\\s+yes\\s+Running\\s+Drain\\s+node-upgrade/.*"), table);
    assertTrue(table.contains("WorkersUpgrade/to-1-30  v1.30.2+k3s1  Running  0/1"), table);
    assertTrue(table.contains("  Progressing=True  NodeUpgrading  worker-x: drain"), table);
  }

  @Test
  void aWorkloadKubeconfigThatWouldRunAProgramIsRefusedAndTheRestIsStillShown() throws Exception {
    clusterWithOneControlPlaneAndOnePool();
    kubeconfigSecret("    exec: {apiVersion: client.authentication.k8s.io/v1, command: /bin/sh, args: [-c, 'touch /tmp/pwned']}");

    assertEquals(0, run("describe", "cluster", "default/demo", "-o", "yaml"), err.toString());
    String yaml = out.toString(StandardCharsets.UTF_8);
    assertTrue(yaml.contains("workloadError: \"Secret default/demo-kubeconfig: users[admin].user.exec is not allowed"), yaml);
    assertTrue(yaml.contains("name: \"demo-md-0-x\""), yaml);
    assertTrue(!yaml.contains("nodeReady"), "node state is unknown, not guessed: " + yaml);
  }

  @Test
  void fileReferencesInTheWorkloadKubeconfigAreRefused() {
    byte[] kubeconfig = """
        clusters: [{name: c, cluster: {server: "https://x", certificate-authority: /etc/ca.crt}}]
        users: [{name: u, user: {token: t}}]
        """.getBytes(StandardCharsets.UTF_8);
    WorkloadKubeconfig.Refused refused = assertThrows(WorkloadKubeconfig.Refused.class,
        () -> WorkloadKubeconfig.parse(kubeconfig, "Secret ns/c-kubeconfig"));
    assertTrue(refused.getMessage().contains("clusters[c].cluster.certificate-authority is not allowed"), refused.getMessage());
    assertTrue(!refused.getMessage().contains("/etc/ca.crt"), "the content is never quoted");
  }

  @Test
  void aMissingKubeconfigSecretLeavesNodeStateUnknownWithTheReason() throws Exception {
    clusterWithOneControlPlaneAndOnePool();

    assertEquals(0, run("describe", "cluster", "default/demo", "-o", "json"), err.toString());
    JsonNode tree = new ObjectMapper().readTree(out.toString(StandardCharsets.UTF_8));
    assertEquals("Secret default/demo-kubeconfig not found or has no data key 'value'", tree.path("workloadError").asText());
    assertTrue(tree.path("controlPlane").path("machines").get(0).path("nodeReady").isMissingNode());
  }

  @Test
  void anUnknownClusterIsRefusedAndABadReferenceIsAUsageError() {
    assertEquals(2, run("describe", "cluster", "default/nope"));
    assertTrue(err.toString().contains("Cluster default/nope not found"), err.toString());
    err.reset();
    assertEquals(2, run("describe", "cluster", "demo"));
    assertTrue(err.toString().contains("NS/NAME must be namespace/name, got 'demo'"), err.toString());
  }

  @Test
  void aManagementClusterThatDoesNotAnswerIsExitThree() throws Exception {
    int closedPort;
    try (java.net.ServerSocket socket = new java.net.ServerSocket(0)) {
      closedPort = socket.getLocalPort();
    }
    io.fabric8.kubernetes.client.Config config = new io.fabric8.kubernetes.client.ConfigBuilder()
        .withMasterUrl("http://127.0.0.1:" + closedPort).withRequestRetryBackoffLimit(0).build();
    try (KubernetesClient unreachable = new io.fabric8.kubernetes.client.KubernetesClientBuilder().withConfig(config).build()) {
      CliContext context = CliContext.of(null, "q", new PrintStream(out, true, StandardCharsets.UTF_8), 0)
          .withKubernetes(path -> unreachable);
      int code = InplaceCli.commandLine(context, new PrintStream(err, true, StandardCharsets.UTF_8))
          .execute("describe", "cluster", "default/demo");
      assertEquals(3, code, err.toString());
    }
  }
}
