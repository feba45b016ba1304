package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Workflow;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;

/**
 * The etcd snapshot a ControlPlaneUpgrade takes on its first control-plane node before any node
 * changes (DESIGN s.3): one activity call, its outcome in the run's status, a refusal of the run if
 * it fails.
 */
final class EtcdSnapshotStep {
  private static final Logger log = Workflow.getLogger(EtcdSnapshotStep.class);
  private final HostActivities hosts;
  private final RunStatus status;

  EtcdSnapshotStep(HostActivities hosts, RunStatus status) {
    this.hosts = hosts;
    this.status = status;
  }

  /**
   * Takes the snapshot on {@code first}'s host unless every control plane already runs {@code target}
   * ({@link RunOrder#takesEtcdSnapshot}, given the versions preflight {@code observed}).
   */
  void take(NodeUpgradeRequest first, List<MachineInfo> controlPlanes, Map<String, String> observed, String target,
      VersionMatch versions) {
    if (!RunOrder.takesEtcdSnapshot(controlPlanes, observed, target, versions)) {
      return;
    }
    String name = RunOrder.snapshotName(target);
    String node = first.node().nodeName();
    status.setPhase(RunPhase.PREFLIGHT, "taking etcd snapshot " + name + " on " + node);
    try {
      EtcdSnapshotResult snapshot =
          hosts.snapshotEtcd(new EtcdSnapshotRequest(first.hostAccess(), first.distribution(), first.profile(), name));
      status.setEtcdSnapshot(snapshot.name());
      log.info("etcd snapshot {} on {} at {}{}", snapshot.name(), node, snapshot.location(),
              snapshot.alreadyTaken() ? " (taken by an earlier attempt)" : "");
    } catch (ActivityFailure e) {
      Failures.rethrowIfCancelled(e);
      throw status.refuse(Failures.typeOf(e, UpgradeFailures.ETCD_SNAPSHOT_FAILED),
          "etcd snapshot " + name + " on " + node + " failed: " + Failures.describe(e));
    }
  }
}
