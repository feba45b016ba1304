package dev.inplace.activities.kube;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.support.StepHeartbeat;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudgetStatus;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.temporal.activity.Activity;
import io.temporal.activity.ActivityExecutionContext;
import io.temporal.failure.ApplicationFailure;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link NodeActivities} against the workload cluster's API server. */
public final class NodeActivitiesImpl implements NodeActivities {
  private static final Logger log = LoggerFactory.getLogger(NodeActivitiesImpl.class);
  private static final ObjectMapper JSON = new ObjectMapper();
  /** The longest wait between two looks of a drain or wait loop (they start at 50 ms, see PollBackoff). */
  static final Duration DEFAULT_POLL_INTERVAL = Duration.ofMillis(500);

  private final KubeClients clients;
  private final Duration firstPoll;
  private final Duration pollInterval;

  /**
   * How often the drain and the waits also beat from a side thread, with their latest progress: their
   * own beats come once per round, and the first round waits for the workload client and the first
   * API calls, which on a worker just started on a loaded machine took longer than the 10 s heartbeat
   * timeout (the chaos campaign's 30-node seed 1 lost a drain's last attempt to it).
   */
  private static final Duration SIDE_BEAT_INTERVAL = Duration.ofSeconds(3);

  public NodeActivitiesImpl(KubeClients clients) {
    this(clients, DEFAULT_POLL_INTERVAL);
  }

  /** @param pollInterval the longest wait between two looks of a drain or wait loop (tests use less) */
  public NodeActivitiesImpl(KubeClients clients, Duration pollInterval) {
    this(clients, PollBackoff.FIRST, pollInterval);
  }

  /**
   * @param firstPoll the first wait between two looks of a drain and of the waits for a node or the
   *     control plane ({@link PollBackoff#FIRST}; tests of what wakes a wait early use a long one)
   */
  public NodeActivitiesImpl(KubeClients clients, Duration firstPoll, Duration pollInterval) {
    this.clients = clients;
    this.firstPoll = firstPoll;
    this.pollInterval = pollInterval;
  }

  @Override
  public NodeState inspectNode(NodeRequest request) {
    return call(
        "inspectNode",
        request.cluster(),
        request.nodeName(),
        () -> {
          NodeState state = stateOf(existingNode(request.cluster(), request.nodeName()));
          log.info("Node {} observed: {}", request.nodeName(), state);
          return state;
        });
  }

  @Override
  public CordonResult cordonNode(CordonRequest request) {
    return call(
        "cordonNode",
        request.cluster(),
        request.nodeName(),
        () -> {
          Node node = existingNode(request.cluster(), request.nodeName());
          NodeState state = stateOf(node);
          if (state.unschedulable() && request.owner().equals(state.cordonedBy())) {
            log.info("Node {} already cordoned by {}", request.nodeName(), request.owner());
            return new CordonResult(true, true);
          }
          if (state.unschedulable()) {
            log.info(
                "Node {} already unschedulable (cordoned by {}); leaving it alone",
                request.nodeName(),
                state.cordonedBy() == null ? "someone else" : state.cordonedBy());
            return new CordonResult(false, true);
          }
          patchNode(request.cluster(), node, true, request.owner());
          log.info("Cordoned node {} for {}", request.nodeName(), request.owner());
          return new CordonResult(true, false);
        });
  }

  @Override
  public UncordonResult uncordonNode(UncordonRequest request) {
    return call(
        "uncordonNode",
        request.cluster(),
        request.nodeName(),
        () -> {
          Node node = existingNode(request.cluster(), request.nodeName());
          NodeState state = stateOf(node);
          if (!request.owner().equals(state.cordonedBy())) {
            String reason =
                state.unschedulable() ? "not cordoned by " + request.owner() : "already schedulable";
            log.info("Not uncordoning node {}: {}", request.nodeName(), reason);
            return new UncordonResult(false, reason);
          }
          patchNode(request.cluster(), node, false, null);
          log.info("Uncordoned node {} (cordoned by {})", request.nodeName(), request.owner());
          return new UncordonResult(true, "cordoned by " + request.owner());
        });
  }

  @Override
  public DrainResult drainNode(DrainRequest request) {
    return call(
        "drainNode",
        request.cluster(),
        request.nodeName(),
        () -> {
          AtomicReference<NodeDrain> running = new AtomicReference<>();
          DrainProgress resumed = resumedDrain();
          try (StepHeartbeat beating =
              sideBeat(() -> running.get() == null || running.get().latest() == null
                  ? resumed : running.get().latest())) {
            return drain(request, running);
          }
        });
  }

  private DrainResult drain(DrainRequest request, AtomicReference<NodeDrain> running) {
    if (request.options().skip()) {
      log.info("Drain of node {} skipped by request", request.nodeName());
      return new DrainResult(0, 0, 0, 0, 0);
    }
    if (onlyNode(request.cluster(), request.nodeName())) {
      // Evicted pods could go nowhere: they would only be down for the upgrade (or a PDB would
      // block it forever). The node stays cordoned; its pods restart with the node.
      log.warn(
          "Drain of node {} skipped: it is the cluster's only node, there is nowhere to evict to"
              + " (cordoned only)",
          request.nodeName());
      return new DrainResult(0, 0, 0, 0, 0);
    }
    ActivityExecutionContext context = Activity.getExecutionContext();
    NodeDrain drain =
        new NodeDrain(
            clients.workload(request.cluster()),
            describe(request.cluster(), request.nodeName()),
            request.nodeName(),
            request.options(),
            context,
            firstPoll,
            pollInterval);
    running.set(drain);
    DrainResult result = drain.run();
    log.info("Drained node {}: {}", request.nodeName(), result);
    return result;
  }

  /** The drain progress an earlier attempt heartbeated (none: nothing evicted yet). */
  private static DrainProgress resumedDrain() {
    try {
      return Activity.getExecutionContext()
          .getHeartbeatDetails(DrainProgress.class)
          .orElse(new DrainProgress(List.of(), 0));
    } catch (IllegalStateException | NullPointerException notInAnActivity) {
      return new DrainProgress(List.of(), 0);
    }
  }

  /** Beats {@code latest} every {@link #SIDE_BEAT_INTERVAL} until closed (nothing outside an activity). */
  private static StepHeartbeat sideBeat(Supplier<?> latest) {
    ActivityExecutionContext context;
    try {
      context = Activity.getExecutionContext();
    } catch (IllegalStateException | NullPointerException notInAnActivity) {
      return StepHeartbeat.none();
    }
    return StepHeartbeat.start(context, SIDE_BEAT_INTERVAL, latest);
  }

  /** Observed: the workload cluster has one Node, and it is this one. */
  private boolean onlyNode(ClusterRef cluster, String nodeName) {
    List<Node> nodes = clients.workload(cluster).nodes().list().getItems();
    return nodes.size() == 1 && nodeName.equals(nodes.get(0).getMetadata().getName());
  }

  @Override
  public NodeState awaitNodeVersion(AwaitNodeRequest request) {
    return call(
        "awaitNodeVersion",
        request.cluster(),
        request.nodeName(),
        () -> {
          AtomicReference<NodeState> latest = new AtomicReference<>();
          try (StepHeartbeat beating = sideBeat(latest::get);
              ChangeSignal changes =
                  ChangeSignal.<Node>of(
                      describe(request.cluster(), request.nodeName()),
                      w -> nodeResource(request.cluster(), request.nodeName()).watch(w))) {
            return awaitNode(request, latest, changes);
          }
        });
  }

  /**
   * Looks at the Node until it is Ready at the expected version or the timeout passes. Between two
   * looks it sleeps at most the backoff, and {@code changes} wakes it as soon as the Node changes
   * (without a watch it is the same loop, polling).
   */
  private NodeState awaitNode(
      AwaitNodeRequest request, AtomicReference<NodeState> latest, ChangeSignal changes) {
    ActivityExecutionContext context = Activity.getExecutionContext();
    long deadline = System.nanoTime() + Duration.ofSeconds(request.timeoutSeconds()).toNanos();
    String observation = "nothing observed yet";
    PollBackoff backoff = new PollBackoff(firstPoll, pollInterval);
    while (true) {
      NodeState state = null;
      try {
        Node node = nodeResource(request.cluster(), request.nodeName()).get();
        if (node == null) {
          observation = "node is not registered";
        } else {
          state = stateOf(node);
          observation = state.toString();
        }
      } catch (KubernetesClientException e) {
        // The API server itself may be restarting on an upgraded control plane.
        if (!KubeFailures.isTransient(e)) {
          throw KubeFailures.translate(
              e, UpgradeFailures.NODE_NOT_FOUND, describe(request.cluster(), request.nodeName()));
        }
        observation = "API " + KubeFailures.describe(e);
      }
      if (state != null
          && state.ready()
          && sameVersion(state.kubeletVersion(), request.expectedVersion())) {
        log.info("Node {} is Ready at {}", request.nodeName(), state.kubeletVersion());
        return state;
      }
      if (System.nanoTime() - deadline >= 0) {
        throw UpgradeFailures.nonRetryable(
            UpgradeFailures.VERIFY_TIMEOUT,
            "Node "
                + request.nodeName()
                + " was not Ready at "
                + request.expectedVersion()
                + " within "
                + request.timeoutSeconds()
                + "s; last observation: "
                + observation,
            state);
      }
      latest.set(state);
      context.heartbeat(state);
      pause(changes::await, backoff);
    }
  }

  @Override
  public NodesState inspectNodes(NodesRequest request) {
    List<String> names = requireNodeNames(request.nodeNames());
    return call(
        "inspectNodes",
        request.cluster(),
        () -> {
          KubernetesClient client = clients.workload(request.cluster());
          List<NodeState> states = new ArrayList<>();
          List<String> missing = new ArrayList<>();
          for (String name : names) {
            Node node;
            try {
              node = client.nodes().withName(name).get();
            } catch (KubernetesClientException e) {
              throw KubeFailures.translate(
                  e, UpgradeFailures.NODE_NOT_FOUND, describe(request.cluster(), name));
            }
            if (node == null) {
              missing.add(name);
            } else {
              states.add(stateOf(node));
            }
          }
          log.info("Nodes observed: {}; missing: {}", states, missing);
          return new NodesState(states, missing);
        });
  }

  @Override
  public ControlPlaneHealth awaitControlPlaneHealthy(ControlPlaneCheckRequest request) {
    if (request.nodes() == null
        || request.nodes().stream().anyMatch(NodeActivitiesImpl::incomplete)) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.INVALID_REQUEST, "every expected node needs a name and a version");
    }
    if (request.timeoutSeconds() < 0) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.INVALID_REQUEST, "timeoutSeconds must be >= 0");
    }
    return call(
        "awaitControlPlaneHealthy",
        request.cluster(),
        () -> {
          AtomicReference<List<String>> latest = new AtomicReference<>(List.of());
          try (StepHeartbeat beating = sideBeat(latest::get)) {
            return awaitHealthy(request, latest);
          }
        });
  }

  private ControlPlaneHealth awaitHealthy(
      ControlPlaneCheckRequest request, AtomicReference<List<String>> latest) {
    ActivityExecutionContext context = Activity.getExecutionContext();
    long deadline =
        System.nanoTime() + Duration.ofSeconds(request.timeoutSeconds()).toNanos();
    List<String> lastProblems = List.of();
    PollBackoff backoff = new PollBackoff(firstPoll, pollInterval);
    while (true) {
      ControlPlaneProbe.Observation observation =
          new ControlPlaneProbe(clients.workload(request.cluster()), request.cluster())
              .observe(request.nodes(), request.requireEtcdVoters());
      if (observation.healthy()) {
        log.info("Control plane healthy: {}", observation.checked());
        return new ControlPlaneHealth(true, observation.checked());
      }
      if (!observation.problems().equals(lastProblems)) {
        log.info("Control plane not healthy yet: {}", observation.problems());
        lastProblems = observation.problems();
      }
      if (System.nanoTime() - deadline >= 0) {
        throw UpgradeFailures.nonRetryable(
            UpgradeFailures.CONTROL_PLANE_UNHEALTHY,
            "The control plane of cluster "
                + request.cluster()
                + " was not healthy within "
                + request.timeoutSeconds()
                + "s: "
                + String.join("; ", observation.problems()),
            observation.problems());
      }
      latest.set(observation.problems());
      context.heartbeat(observation.problems());
      pause(Thread::sleep, backoff);
    }
  }

  @Override
  public NodeVersions controlPlaneVersions(ClusterRef cluster) {
    return call(
        "controlPlaneVersions",
        cluster,
        () -> {
          List<Node> found;
          try {
            found = clients.workload(cluster).nodes().withLabel(CONTROL_PLANE_NODE_LABEL).list().getItems();
          } catch (KubernetesClientException e) {
            throw KubeFailures.translate(
                e, UpgradeFailures.KUBERNETES_API_ERROR, "control-plane Nodes of cluster " + cluster);
          }
          List<NodeVersion> versions =
              found.stream()
                  .filter(n -> n.getMetadata().getLabels() != null
                      && n.getMetadata().getLabels().containsKey(CONTROL_PLANE_NODE_LABEL))
                  .map(n -> new NodeVersion(
                      n.getMetadata().getName(),
                      n.getStatus() == null || n.getStatus().getNodeInfo() == null
                          ? null : n.getStatus().getNodeInfo().getKubeletVersion()))
                  .sorted(java.util.Comparator.comparing(NodeVersion::nodeName))
                  .toList();
          log.info("control-plane kubelets of {}: {}", cluster, versions);
          return new NodeVersions(versions);
        });
  }

  @Override
  public BudgetReport listBlockingBudgets(ClusterRef cluster) {
    return call(
        "listBlockingBudgets",
        cluster,
        () -> {
          List<PodDisruptionBudget> budgets;
          try {
            budgets =
                clients
                    .workload(cluster)
                    .policy()
                    .v1()
                    .podDisruptionBudget()
                    .inAnyNamespace()
                    .list()
                    .getItems();
          } catch (KubernetesClientException e) {
            throw KubeFailures.translate(
                e,
                UpgradeFailures.KUBERNETES_API_ERROR,
                "PodDisruptionBudgets of cluster " + cluster);
          }
          List<BlockingBudget> blocking =
              budgets.stream()
                  .filter(NodeActivitiesImpl::blocksEveryDisruption)
                  .map(
                      b ->
                          new BlockingBudget(
                              b.getMetadata().getNamespace(),
                              b.getMetadata().getName(),
                              b.getStatus().getDisruptionsAllowed(),
                              b.getStatus().getExpectedPods()))
                  .sorted(
                      Comparator.comparing(BlockingBudget::namespace)
                          .thenComparing(BlockingBudget::name))
                  .toList();
          log.info(
              "{} of {} PodDisruptionBudgets allow no disruption now: {}",
              blocking.size(),
              budgets.size(),
              blocking);
          return new BudgetReport(blocking);
        });
  }

  /** Allows no disruption now while it protects pods; a budget with no status is not judged. */
  private static boolean blocksEveryDisruption(PodDisruptionBudget budget) {
    PodDisruptionBudgetStatus status = budget.getStatus();
    return status != null
        && status.getDisruptionsAllowed() != null
        && status.getDisruptionsAllowed() == 0
        && status.getExpectedPods() != null
        && status.getExpectedPods() > 0;
  }

  private static boolean incomplete(ExpectedNode node) {
    return node == null
        || node.nodeName() == null
        || node.nodeName().isBlank()
        || node.version() == null
        || node.version().isBlank();
  }

  private static List<String> requireNodeNames(List<String> names) {
    if (names == null || names.stream().anyMatch(n -> n == null || n.isBlank())) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.INVALID_REQUEST, "nodeNames must be a list of node names");
    }
    return names;
  }

  /** Equal strings, the same version spelled with or without the leading {@code v}, or a k0s node at its release. */
  static boolean sameVersion(String actual, String expected) {
    if (actual == null || expected == null) {
      return false;
    }
    if (actual.equals(expected)) {
      return true;
    }
    return KubeVersion.nodeRuns(actual, expected);
  }

  static NodeState stateOf(Node node) {
    boolean ready =
        node.getStatus() != null
            && node.getStatus().getConditions() != null
            && node.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    boolean unschedulable =
        node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
    String kubeletVersion =
        node.getStatus() == null || node.getStatus().getNodeInfo() == null
            ? null
            : node.getStatus().getNodeInfo().getKubeletVersion();
    Map<String, String> annotations = node.getMetadata().getAnnotations();
    String cordonedBy = annotations == null ? null : annotations.get(CORDONED_BY_ANNOTATION);
    return new NodeState(
        node.getMetadata().getName(), ready, unschedulable, kubeletVersion, cordonedBy);
  }

  private Node existingNode(ClusterRef cluster, String nodeName) {
    Node node;
    try {
      node = nodeResource(cluster, nodeName).get();
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(e, UpgradeFailures.NODE_NOT_FOUND, describe(cluster, nodeName));
    }
    if (node == null) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.NODE_NOT_FOUND, describe(cluster, nodeName) + " not found");
    }
    return node;
  }

  private Resource<Node> nodeResource(ClusterRef cluster, String nodeName) {
    return clients.workload(cluster).nodes().withName(nodeName);
  }

  /**
   * Sets schedulability and the owner annotation in one JSON merge patch (strategic merge patch is
   * not universally served). The observed resourceVersion makes the API server refuse the patch
   * with 409 if someone changed the node since we looked; the retry then observes again.
   */
  private void patchNode(ClusterRef cluster, Node observed, boolean cordon, String owner) {
    ObjectNode patch = JSON.createObjectNode();
    ObjectNode metadata = patch.putObject("metadata");
    metadata.put("resourceVersion", observed.getMetadata().getResourceVersion());
    ObjectNode annotations = metadata.putObject("annotations");
    ObjectNode spec = patch.putObject("spec");
    if (cordon) {
      annotations.put(CORDONED_BY_ANNOTATION, owner);
      spec.put("unschedulable", true);
    } else {
      annotations.putNull(CORDONED_BY_ANNOTATION);
      spec.putNull("unschedulable");
    }
    try {
      nodeResource(cluster, observed.getMetadata().getName())
          .patch(PatchContext.of(PatchType.JSON_MERGE), JSON.writeValueAsString(patch));
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(
          e, UpgradeFailures.NODE_NOT_FOUND, describe(cluster, observed.getMetadata().getName()));
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a node patch", e);
    }
  }

  /** A wait of at most the given time (a sleep, or a sleep a change can end early). */
  private interface Pause {
    void await(long millis) throws InterruptedException;
  }

  private static void pause(Pause pause, PollBackoff backoff) {
    try {
      pause.await(backoff.nextMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting", e);
    }
  }

  private static String describe(ClusterRef cluster, String nodeName) {
    return "node " + nodeName + " in cluster " + cluster;
  }

  /** Runs one activity about several nodes with {@code cluster} in the MDC. */
  @SuppressWarnings("try") // the MDC scope is the resource's whole purpose
  private static <T> T call(String activity, ClusterRef cluster, Supplier<T> body) {
    if (cluster == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, "cluster is required");
    }
    try (KubeMdc mdc = KubeMdc.of("cluster", cluster.toString())) {
      try {
        return body.get();
      } catch (ApplicationFailure e) {
        log.warn("{} failed: {}: {}", activity, e.getType(), e.getOriginalMessage());
        throw e;
      }
    }
  }

  /** Runs one activity with {@code cluster} and {@code node} in the MDC, logging a failure once. */
  @SuppressWarnings("try") // the MDC scope is the resource's whole purpose
  private static <T> T call(String activity, ClusterRef cluster, String node, Supplier<T> body) {
    Objects.requireNonNull(cluster, "cluster");
    try (KubeMdc mdc = KubeMdc.of("cluster", cluster.toString(), "node", node)) {
      try {
        return body.get();
      } catch (ApplicationFailure e) {
        log.warn("{} failed: {}: {}", activity, e.getType(), e.getOriginalMessage());
        throw e;
      }
    }
  }
}
