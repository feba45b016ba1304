package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.HostInspectRequest;
import dev.inplace.workflows.api.NodeActivities.NodeRequest;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import io.temporal.workflow.Async;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;

/**
 * What a NodeUpgrade run's preflight reads before {@link NodePreflight} judges it: the Node, its
 * host and, for a worker, the control plane's versions. Three reads that change nothing and need
 * nothing of each other: from node-upgrade-preflight-reads-at-once on ({@code atOnce}) they run at
 * once; runs recorded before it read one after the other.
 */
final class NodePreflightReads {
  /** What preflight observed: the Node, the host, and the control plane's versions (null unless read). */
  record Observed(NodeState node, HostFacts host, NodeVersions controlPlane) {}

  private final NodeActivityStubs stubs;
  private final boolean atOnce;

  NodePreflightReads(NodeActivityStubs stubs, boolean atOnce) {
    this.stubs = stubs;
    this.atOnce = atOnce;
  }

  /**
   * Reads the Node, its host and, when {@code readsControlPlane}, the control plane's versions. At
   * once, they are judged in that order as their results come (the order a run reading one after the
   * other meets them in): a failure is thrown as soon as it and the reads before it are known, without
   * waiting for the later reads, which change nothing (a missing Node is reported at once, not after
   * the retries of an unreachable host). Throws the activities' failures.
   */
  Observed observe(NodeUpgradeRequest request, NodeRequest nodeRequest, boolean readsControlPlane) {
    HostInspectRequest hostRequest = new HostInspectRequest(
        request.hostAccess(), request.distribution(), request.node().role(), request.profile(), request.artifacts());
    Promise<NodeState> node = Async.function(
        stubs.nodes(NodeActivitySummaries.inspectNode(request))::inspectNode, nodeRequest);
    if (!atOnce) {
      node.get(); // runs before the change wait for each read before they start the next
    }
    Promise<HostFacts> host = Async.function(
        stubs.hosts(NodeActivitySummaries.inspectHost(request))::inspectHost, hostRequest);
    if (!atOnce) {
      host.get();
    }
    Promise<NodeVersions> controlPlane = readsControlPlane
        ? Async.function(stubs.nodes(NodeActivitySummaries.controlPlaneVersions(request))::controlPlaneVersions,
            request.node().cluster())
        : Workflow.newPromise(null);
    return new Observed(node.get(), host.get(), controlPlane.get());
  }
}
