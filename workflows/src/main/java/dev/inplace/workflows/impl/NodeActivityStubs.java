package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.workflow.Workflow;
import java.util.Map;

/**
 * The activity stubs of a NodeUpgrade run. From node-upgrade-ui-summaries on, each call gets its
 * own stub carrying the call's summary for the Temporal UI ({@link NodeActivitySummaries}); before
 * that, the shared stubs. Options come from {@link ActivityOptionsCatalog} only.
 */
final class NodeActivityStubs {
  private final HostActivities hosts =
      Workflow.newActivityStub(
          HostActivities.class,
          ActivityOptionsCatalog.hostStep(),
          Map.of("StageArtifacts", ActivityOptionsCatalog.staging()));
  private final NodeActivities nodes =
      Workflow.newActivityStub(NodeActivities.class, ActivityOptionsCatalog.kubeCall());
  private final ClusterApiActivities clusterApi =
      Workflow.newActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.kubeCall());
  private boolean uiSummaries;

  void uiSummaries(boolean enabled) {
    uiSummaries = enabled;
  }

  HostActivities hosts(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(HostActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.hostStep(), summary))
        : hosts;
  }

  HostActivities stager(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(HostActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.staging(), summary))
        : hosts;
  }

  NodeActivities nodes(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(NodeActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.kubeCall(), summary))
        : nodes;
  }

  ClusterApiActivities capi(String summary) {
    return uiSummaries
        ? Workflow.newActivityStub(ClusterApiActivities.class, NodeActivitySummaries.summarized(true, ActivityOptionsCatalog.kubeCall(), summary))
        : clusterApi;
  }

  /** The drain, with the request's own drain budget. */
  NodeActivities drainer(NodeUpgradeRequest request) {
    return Workflow.newActivityStub(
        NodeActivities.class,
        NodeActivitySummaries.summarized(uiSummaries, ActivityOptionsCatalog.drain(request.drain().timeoutSeconds()),
            NodeActivitySummaries.drain(request)));
  }

  /** The wait for the node to be Ready at {@code version}, with the request's readiness budget. */
  NodeActivities verifier(NodeUpgradeRequest request, String version) {
    return Workflow.newActivityStub(
        NodeActivities.class,
        NodeActivitySummaries.summarized(uiSummaries, ActivityOptionsCatalog.awaitNode(request.readyTimeoutSeconds()),
            NodeActivitySummaries.awaitVersion(request, version)));
  }

  /** The distribution's upgrade command (kubeadm upgrade apply|node), with its own long budget. */
  HostActivities upgrader(NodeUpgradeRequest request) {
    return Workflow.newActivityStub(HostActivities.class, NodeActivitySummaries.summarized(
        uiSummaries, ActivityOptionsCatalog.distributionUpgrade(), NodeActivitySummaries.upgradeCommand(request)));
  }
}
