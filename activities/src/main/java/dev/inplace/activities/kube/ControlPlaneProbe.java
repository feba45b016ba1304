package dev.inplace.activities.kube;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodeActivities.ExpectedNode;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.http.HttpClient;
import io.fabric8.kubernetes.client.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One look at a control plane's health: each listed node Ready at its expected kubelet version, the
 * apiserver's {@code /readyz} answering {@code ok} and, when asked, each node that carries the k3s
 * condition {@value #ETCD_VOTER_CONDITION} reporting True. A restarted k3s server rejoins etcd as a
 * learner; restarting the next server before it is promoted risks quorum.
 *
 * <p>An API server that cannot be reached, or answers 5xx, is a problem to wait out, not a failure:
 * it restarts with the upgraded server. Refusals no wait can fix (401, 403) fail at once.
 */
final class ControlPlaneProbe {
  static final String ETCD_VOTER_CONDITION = "EtcdIsVoter";
  static final String READYZ = "/readyz";
  private static final int BODY_IN_MESSAGE = 80;
  private static final Duration READYZ_TIMEOUT = Duration.ofSeconds(10);

  /**
   * @param checked what was found healthy
   * @param problems what is not healthy yet; empty when the control plane is healthy
   */
  record Observation(List<String> checked, List<String> problems) {
    boolean healthy() {
      return problems.isEmpty();
    }
  }

  private final KubernetesClient client;
  private final ClusterRef cluster;

  ControlPlaneProbe(KubernetesClient client, ClusterRef cluster) {
    this.client = client;
    this.cluster = cluster;
  }

  Observation observe(List<ExpectedNode> nodes, boolean requireEtcdVoters) {
    List<String> checked = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (ExpectedNode expected : nodes) {
      Node node = read(expected.nodeName(), problems);
      if (node != null) {
        checkNode(node, expected, checked, problems);
        if (requireEtcdVoters) {
          checkEtcdVoter(node, checked, problems);
        }
      }
    }
    checkReadyz(checked, problems);
    return new Observation(List.copyOf(checked), List.copyOf(problems));
  }

  private Node read(String nodeName, List<String> problems) {
    try {
      Node node = client.nodes().withName(nodeName).get();
      if (node == null) {
        problems.add("node " + nodeName + " is not registered");
      }
      return node;
    } catch (KubernetesClientException e) {
      if (!KubeFailures.isTransient(e)) {
        throw KubeFailures.translate(
            e, UpgradeFailures.NODE_NOT_FOUND, "node " + nodeName + " in cluster " + cluster);
      }
      problems.add("node " + nodeName + " cannot be read: API " + KubeFailures.describe(e));
      return null;
    }
  }

  private static void checkNode(
      Node node, ExpectedNode expected, List<String> checked, List<String> problems) {
    NodeState state = NodeActivitiesImpl.stateOf(node);
    String name = expected.nodeName();
    if (!state.ready()) {
      NodeCondition ready = condition(node, "Ready");
      String why =
          ready == null || ready.getMessage() == null ? "" : " (" + ready.getMessage() + ")";
      problems.add("node " + name + " is not Ready" + why);
    } else if (!NodeActivitiesImpl.sameVersion(state.kubeletVersion(), expected.version())) {
      problems.add(
          "node "
              + name
              + " runs kubelet "
              + state.kubeletVersion()
              + ", expected "
              + expected.version());
    } else {
      checked.add("node " + name + " Ready at " + state.kubeletVersion());
    }
  }

  /** Nodes without the condition pass: k3s with SQLite or an external datastore has no etcd. */
  private static void checkEtcdVoter(Node node, List<String> checked, List<String> problems) {
    NodeCondition voter = condition(node, ETCD_VOTER_CONDITION);
    if (voter == null) {
      return;
    }
    String name = node.getMetadata().getName();
    if ("True".equals(voter.getStatus())) {
      checked.add("node " + name + " " + ETCD_VOTER_CONDITION + "=True");
    } else {
      problems.add(
          "node "
              + name
              + " is not an etcd voter yet ("
              + ETCD_VOTER_CONDITION
              + "="
              + voter.getStatus()
              + (voter.getReason() == null ? "" : ", " + voter.getReason())
              + ")");
    }
  }

  /**
   * GETs {@code /readyz} with the client's own HTTP client (its credentials and TLS), reading the
   * body whatever the status: a failing apiserver names its failed checks there ({@code [-]etcd
   * failed: reason withheld}).
   */
  private void checkReadyz(List<String> checked, List<String> problems) {
    String base = client.getConfiguration().getMasterUrl();
    String url = (base.endsWith("/") ? base : base + "/") + READYZ.substring(1);
    HttpClient http = client.getHttpClient();
    HttpResponse<String> response;
    try {
      response =
          http.sendAsync(
                  http.newHttpRequestBuilder()
                      .uri(url)
                      .timeout(READYZ_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
                      .build(),
                  String.class)
              .get(READYZ_TIMEOUT.toMillis() + 1000, TimeUnit.MILLISECONDS);
    } catch (ExecutionException | TimeoutException | RuntimeException e) {
      Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
      problems.add(
          "apiserver " + READYZ + " unreachable (" + cause.getClass().getSimpleName() + ")");
      return;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while reading " + READYZ, e);
    }
    String body = response.body() == null ? "" : response.body().strip();
    if (response.code() == 200 && body.equals("ok")) {
      checked.add("apiserver " + READYZ + " ok");
      return;
    }
    List<String> failedChecks = body.lines().filter(l -> l.startsWith("[-]")).toList();
    String detail = failedChecks.isEmpty() ? excerpt(body) : String.join(", ", failedChecks);
    problems.add(
        "apiserver "
            + READYZ
            + " answered HTTP "
            + response.code()
            + (detail.isEmpty() ? "" : ": " + detail));
  }

  static NodeCondition condition(Node node, String type) {
    if (node.getStatus() == null || node.getStatus().getConditions() == null) {
      return null;
    }
    return node.getStatus().getConditions().stream()
        .filter(c -> type.equals(c.getType()))
        .findFirst()
        .orElse(null);
  }

  private static String excerpt(String body) {
    if (body == null) {
      return "";
    }
    String oneLine = body.strip().replaceAll("\\s+", " ");
    return oneLine.length() <= BODY_IN_MESSAGE
        ? oneLine
        : oneLine.substring(0, BODY_IN_MESSAGE) + "...";
  }
}
