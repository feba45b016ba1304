package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckRequest;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneCheckRequest;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodeActivities.ExpectedNode;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.util.List;
import java.util.function.Supplier;

/**
 * What a WorkersUpgrade run checks against the cluster before its first node, once it has read the
 * inventory (DESIGN s.6): every control-plane node at the target (a kubelet must never be newer than
 * the apiserver) and healthy (the start gate), no machine of the pool too far behind the target, the
 * release's artifacts fetchable, and the PodDisruptionBudgets that would hold drains up (a warning,
 * never a refusal). Each refusal changes nothing.
 */
final class PoolStartChecks {
  /**
   * Change ID: runs from this version on check the inventory first (control plane at the target,
   * version skew), then start the three reads (the start gate, the artifacts, the budgets) at once
   * and judge them in that order as their results come: a refusal does not wait for the reads after
   * it (the gate's does not wait for an artifact download). Older runs read one after the other, with
   * the version-skew check between the gate and the artifacts.
   */
  static final String READS_AT_ONCE_CHANGE = "workers-start-checks-at-once";

  private final NodeActivities startGate;
  private final HostActivities hosts;
  private final NodeActivities nodes;
  private final RunStatus status;

  PoolStartChecks(NodeActivities startGate, HostActivities hosts, NodeActivities nodes, RunStatus status) {
    this.startGate = startGate;
    this.hosts = hosts;
    this.nodes = nodes;
    this.status = status;
  }

  /** Throws the run's refusal when a check fails. A workflow call: only from the run's main thread. */
  void check(ClusterRef cluster, String target, NodeUpgradeTemplate template, List<MachineInfo> controlPlanes,
      List<MachineInfo> pool, VersionMatch versions) {
    boolean atOnce = Workflow.getVersion(READS_AT_ONCE_CHANGE, Workflow.DEFAULT_VERSION, 1) >= 1;
    ClusterPreflight.controlPlaneBehind(controlPlanes, target, versions)
        .ifPresent(why -> {
          throw status.refuse(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, why);
        });
    ControlPlaneCheckRequest gate = new ControlPlaneCheckRequest(
        cluster,
        controlPlanes.stream().map(m -> new ExpectedNode(m.nodeName(), target)).toList(),
        template.distribution().reportsEtcdVoterCondition(),
        ActivityOptionsCatalog.WORKERS_GATE_SECONDS);
    ArtifactCheckRequest artifacts = new ArtifactCheckRequest(template.artifacts());
    if (!atOnce) {
      gatePasses(target, () -> startGate.awaitControlPlaneHealthy(gate));
      versionSkew(pool, target);
      artifactsFetchable(target, () -> hosts.verifyArtifacts(artifacts));
      status.warnAboutBudgets(() -> nodes.listBlockingBudgets(cluster));
      return;
    }
    versionSkew(pool, target);
    Promise<ControlPlaneHealth> healthy = Async.function(startGate::awaitControlPlaneHealthy, gate);
    Promise<ArtifactCheckResult> fetchable = Async.function(hosts::verifyArtifacts, artifacts);
    Promise<BudgetReport> budgets = Async.function(nodes::listBlockingBudgets, cluster);
    gatePasses(target, healthy::get);
    artifactsFetchable(target, fetchable::get);
    status.warnAboutBudgets(budgets::get);
  }

  private void gatePasses(String target, Supplier<ControlPlaneHealth> gate) {
    try {
      gate.get();
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      String type = Failures.typeOf(e, UpgradeFailures.CONTROL_PLANE_UNHEALTHY);
      throw status.refuse(
          UpgradeFailures.CONTROL_PLANE_UNHEALTHY.equals(type) ? UpgradeFailures.UNSUPPORTED_VERSION_SKEW : type,
          "control plane not at " + target + ": " + Failures.describe(e));
    }
  }

  private void versionSkew(List<MachineInfo> pool, String target) {
    ClusterPreflight.versionSkew(pool, target)
        .ifPresent(why -> {
          throw status.refuse(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, why);
        });
  }

  private void artifactsFetchable(String target, Supplier<ArtifactCheckResult> check) {
    status.preflight("verifying the artifacts of " + target, UpgradeFailures.ARTIFACT_UNAVAILABLE, check);
  }
}
