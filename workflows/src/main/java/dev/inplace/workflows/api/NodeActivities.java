package dev.inplace.workflows.api;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;
import java.util.List;

/**
 * Node operations on the workload cluster, reached through the {@code <cluster>-kubeconfig} Secret.
 * Each observes before it acts and is safe to run again.
 */
@ActivityInterface
public interface NodeActivities {
  /** Annotation recording which run cordoned a node, so only that run uncordons it. */
  String CORDONED_BY_ANNOTATION = "upgrade.inplace.dev/cordoned-by";

  /** Read-only: readiness, schedulability, kubelet version, who cordoned it. */
  @ActivityMethod
  NodeState inspectNode(NodeRequest request);

  /**
   * Marks the node unschedulable and records {@code owner} in {@link #CORDONED_BY_ANNOTATION}. A node
   * someone else already cordoned is left as it is and reported with {@code cordonedByUs=false}.
   */
  @ActivityMethod
  CordonResult cordonNode(CordonRequest request);

  /**
   * Evicts the node's pods through the Eviction API (PodDisruptionBudgets honoured), skipping
   * DaemonSet and mirror pods, until none is left or the timeout passes. Heartbeats {@link
   * DrainProgress}. Fails with {@code DrainBlocked} naming the pods and budgets still in the way.
   */
  @ActivityMethod
  DrainResult drainNode(DrainRequest request);

  /**
   * Waits until the node is Ready with {@code kubeletVersion} equal to the expected version.
   * Heartbeats the last observation; fails with {@code VerifyTimeout} after the timeout.
   */
  @ActivityMethod
  NodeState awaitNodeVersion(AwaitNodeRequest request);

  /** Makes the node schedulable again, only if {@code owner} cordoned it. */
  @ActivityMethod
  UncordonResult uncordonNode(UncordonRequest request);

  /** Read-only: the state of several nodes at once; names not found are listed in {@code missing}. */
  @ActivityMethod
  NodesState inspectNodes(NodesRequest request);

  /**
   * Waits until the control plane is healthy: every listed node Ready at its expected version, the
   * apiserver's {@code /readyz} answering ok, and (when asked) every node whose Node carries the
   * k3s condition {@code EtcdIsVoter} reporting True. Heartbeats the problems still seen; fails with
   * {@code ControlPlaneUnhealthy} listing them at the timeout.
   */
  @ActivityMethod
  ControlPlaneHealth awaitControlPlaneHealthy(ControlPlaneCheckRequest request);

  /** Read-only: PodDisruptionBudgets whose status allows no disruption now (drains would wait). */
  @ActivityMethod
  BudgetReport listBlockingBudgets(ClusterRef cluster);

  /**
   * Read-only: the kubelet version of every control-plane Node (label {@value
   * #CONTROL_PLANE_NODE_LABEL}), which a worker's new kubelet must not exceed: a control plane's
   * kubelet is upgraded after its apiserver, so it is never newer than that apiserver.
   */
  @ActivityMethod
  NodeVersions controlPlaneVersions(ClusterRef cluster);

  /** The label kubeadm and k3s put on control-plane Nodes. */
  String CONTROL_PLANE_NODE_LABEL = "node-role.kubernetes.io/control-plane";

  record NodeVersion(String nodeName, String kubeletVersion) {}

  record NodeVersions(List<NodeVersion> nodes) {}

  record NodesRequest(ClusterRef cluster, List<String> nodeNames) {}

  record NodesState(List<NodeState> nodes, List<String> missing) {}

  record ExpectedNode(String nodeName, String version) {}

  record ControlPlaneCheckRequest(
      ClusterRef cluster, List<ExpectedNode> nodes, boolean requireEtcdVoters, long timeoutSeconds) {}

  record ControlPlaneHealth(boolean healthy, List<String> checked) {}

  record BlockingBudget(String namespace, String name, int disruptionsAllowed, int expectedPods) {}

  record BudgetReport(List<BlockingBudget> blocking) {}

  record NodeRequest(ClusterRef cluster, String nodeName) {}

  record NodeState(
      String nodeName,
      boolean ready,
      boolean unschedulable,
      String kubeletVersion,
      String cordonedBy) {}

  record CordonRequest(ClusterRef cluster, String nodeName, String owner) {}

  /** @param cordonedByUs whether {@code owner} holds the cordon (now or from an earlier attempt) */
  record CordonResult(boolean cordonedByUs, boolean wasUnschedulable) {}

  record DrainRequest(ClusterRef cluster, String nodeName, DrainOptions options) {}

  /** A pod still on the node, and why it has not gone. */
  record PendingPod(String namespace, String name, String blockedBy) {}

  record DrainProgress(List<PendingPod> remaining, int evicted) {}

  record DrainResult(
      int evicted, int deleted, int skippedDaemonSet, int skippedMirror, long waitedSeconds) {}

  record AwaitNodeRequest(
      ClusterRef cluster, String nodeName, String expectedVersion, long timeoutSeconds) {}

  record UncordonRequest(ClusterRef cluster, String nodeName, String owner) {}

  record UncordonResult(boolean uncordoned, String reason) {}
}
