package dev.inplace.sandbox.kube;

import static dev.inplace.sandbox.kube.KubeObjects.NS;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ReplicaSetSimulatorTest {
  private SandboxApiServer server;
  private KubernetesClient client;
  private ReplicaSetSimulator simulator;

  @BeforeEach
  void start() {
    server = SandboxApiServer.start();
    client = server.client();
    for (String node : List.of("w1", "w2", "w3")) {
      client.nodes().resource(KubeObjects.readyNode(node)).create();
    }
    simulator = ReplicaSetSimulator.start(client, Duration.ofMillis(100));
  }

  @AfterEach
  void stop() {
    simulator.close();
    server.close();
  }

  private List<Pod> webPods() {
    return client.pods().inNamespace(NS).withLabel("app", "web").list().getItems();
  }

  @Test
  void deletedReplicaIsReplacedRunningAndReadyOnTheLeastLoadedSchedulableNode() {
    client.pods().inNamespace(NS).resource(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1")).create();
    client.pods().inNamespace(NS).resource(KubeObjects.replicaPod("web-2", "web-rs", "web", "w2")).create();
    client.nodes().withName("w3").edit(n -> {
      n.getSpec().setUnschedulable(true);
      return n;
    });

    client.pods().inNamespace(NS).withName("web-1").delete();

    await().atMost(Duration.ofSeconds(5)).until(() -> webPods().size() == 2);
    Pod replacement =
        webPods().stream().filter(p -> !p.getMetadata().getName().equals("web-2")).findFirst().orElseThrow();
    // w1 now holds no web pod and w3 is cordoned.
    assertEquals("w1", replacement.getSpec().getNodeName());
    assertTrue(replacement.getMetadata().getName().startsWith("web-rs-"));
    assertEquals("Running", replacement.getStatus().getPhase());
    assertTrue(DisruptionBudgets.healthy(replacement));
    assertEquals("web-rs", replacement.getMetadata().getOwnerReferences().get(0).getName());
    assertEquals(1, simulator.replacements());
  }

  @Test
  void podsWithoutAReplicaSetAreNotReplaced() throws Exception {
    client.pods().inNamespace(NS).resource(KubeObjects.runningPod("bare", "w1").build()).create();

    client.pods().inNamespace(NS).withName("bare").delete();
    Thread.sleep(400);

    assertTrue(client.pods().inNamespace(NS).list().getItems().isEmpty());
    assertEquals(0, simulator.replacements());
  }

  @Test
  void replacementWaitsPendingUntilANodeBecomesSchedulable() {
    for (String node : List.of("w1", "w2", "w3")) {
      client.nodes().withName(node).edit(n -> {
        n.getSpec().setUnschedulable(true);
        return n;
      });
    }
    client.pods().inNamespace(NS).resource(KubeObjects.replicaPod("web-1", "web-rs", "web", "w1")).create();
    client.pods().inNamespace(NS).withName("web-1").delete();

    await().atMost(Duration.ofSeconds(5)).until(() -> webPods().size() == 1);
    Pod pending = webPods().get(0);
    assertNull(pending.getSpec().getNodeName());
    assertEquals("Pending", pending.getStatus().getPhase());

    client.nodes().withName("w2").edit(n -> {
      n.getSpec().setUnschedulable(false);
      return n;
    });

    await().atMost(Duration.ofSeconds(5)).until(() -> "w2".equals(webPods().get(0).getSpec().getNodeName()));
    assertTrue(DisruptionBudgets.healthy(webPods().get(0)));
  }
}
