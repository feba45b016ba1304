package dev.inplace.activities.kube;

import dev.inplace.workflows.api.ClusterRef;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Base64;

/** Objects the Kubernetes activity tests share. */
public final class KubeFixtures {
  public static final ClusterRef CLUSTER = new ClusterRef("capi-system", "c1");

  private KubeFixtures() {}

  /** A kubeconfig for a plain-HTTP API server, as CAPI stores it in {@code <cluster>-kubeconfig}. */
  public static String kubeconfig(String serverUrl) {
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
            token: test-token-not-a-secret
        """
        .formatted(serverUrl);
  }

  public static void createKubeconfigSecret(
      KubernetesClient management, ClusterRef cluster, String kubeconfig) {
    management
        .secrets()
        .inNamespace(cluster.namespace())
        .resource(
            new SecretBuilder()
                .withNewMetadata()
                .withNamespace(cluster.namespace())
                .withName(cluster.name() + "-kubeconfig")
                .addToLabels("cluster.x-k8s.io/cluster-name", cluster.name())
                .endMetadata()
                .withType("cluster.x-k8s.io/secret")
                .addToData(
                    KubeClients.KUBECONFIG_KEY,
                    Base64.getEncoder()
                        .encodeToString(kubeconfig.getBytes(StandardCharsets.UTF_8)))
                .build())
        .createOr(existing -> existing.update());
  }

  public static Node node(String name, boolean ready, String kubeletVersion) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .endSpec()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus(ready ? "True" : "False")
        .endCondition()
        .withNewNodeInfo()
        .withKubeletVersion(kubeletVersion)
        .endNodeInfo()
        .endStatus()
        .build();
  }

  /** One attempt, so a test sees the activity's own failure. */
  public static ActivityOptions oneAttempt(Duration startToClose) {
    return ActivityOptions.newBuilder()
        .setStartToCloseTimeout(startToClose)
        .setHeartbeatTimeout(Duration.ofSeconds(30))
        .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
        .build();
  }
}
