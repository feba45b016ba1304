package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckRequest;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.HostInspectRequest;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import io.temporal.failure.ApplicationFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The host half of a ControlPlaneUpgrade's preflight: each control-plane host that needs it
 * inspected (a read-only look) and judged in Machine order, then the release's artifacts verified in
 * the worker's cache. Whether the inspections run together and whether the artifacts are verified
 * alongside them is the run's ({@link ControlPlaneUpgradeWorkflowImpl#PARALLEL_HOST_INSPECTION_CHANGE},
 * {@link ControlPlaneUpgradeWorkflowImpl#ARTIFACTS_ALONGSIDE_HOSTS_CHANGE}); the refusals and their
 * order are the same either way.
 */
final class ControlPlaneHostChecks {
  private final HostActivities hosts;
  private final RunStatus status;

  ControlPlaneHostChecks(HostActivities hosts, RunStatus status) {
    this.hosts = hosts;
    this.status = status;
  }

  /**
   * Refuses the run (through {@link RunStatus}) at the first host, in Machine order, that does not
   * pass, or when an artifact is unavailable.
   *
   * @param toInspect the control planes whose hosts are inspected, in Machine order
   * @param requests each node's child request, by node name
   * @param byName each node's state as preflight read it, by node name
   */
  void check(List<MachineInfo> toInspect, Map<String, NodeUpgradeRequest> requests, Map<String, NodeState> byName,
      NodeUpgradeTemplate template, VersionMatch versions) {
    boolean together = Workflow.getVersion(
        ControlPlaneUpgradeWorkflowImpl.PARALLEL_HOST_INSPECTION_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    ArtifactCheckRequest artifactCheck = new ArtifactCheckRequest(template.artifacts());
    Promise<ArtifactCheckResult> artifactsVerified =
        Workflow.getVersion(ControlPlaneUpgradeWorkflowImpl.ARTIFACTS_ALONGSIDE_HOSTS_CHANGE, Workflow.DEFAULT_VERSION, 1)
                >= 1
            ? Async.function(hosts::verifyArtifacts, artifactCheck)
            : null;
    Map<String, Promise<HostFacts>> inspections = new LinkedHashMap<>();
    if (together) {
      for (MachineInfo m : toInspect) {
        inspections.put(m.nodeName(), Async.function(hosts::inspectHost, inspectRequest(requests.get(m.nodeName()))));
      }
    }
    for (MachineInfo m : toInspect) {
      NodeUpgradeRequest child = requests.get(m.nodeName());
      HostFacts facts =
          status.preflight("inspecting the host of " + m.nodeName(), UpgradeFailures.PREFLIGHT_FAILED,
              () -> together ? inspections.get(m.nodeName()).get() : hosts.inspectHost(inspectRequest(child)));
      Optional<ApplicationFailure> refusal = NodePreflight.refusal(child, byName.get(m.nodeName()), facts, versions);
      if (refusal.isPresent()) {
        throw status.refuse(refusal.get().getType(), refusal.get().getOriginalMessage());
      }
    }
    status.preflight("verifying the artifacts of " + template.targetVersion(), UpgradeFailures.ARTIFACT_UNAVAILABLE,
        () -> artifactsVerified != null ? artifactsVerified.get() : hosts.verifyArtifacts(artifactCheck));
  }

  private static HostInspectRequest inspectRequest(NodeUpgradeRequest child) {
    return new HostInspectRequest(
        child.hostAccess(), child.distribution(), NodeRole.CONTROL_PLANE, child.profile(), child.artifacts());
  }
}
