package dev.inplace.worker.watch;

import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import java.util.List;

/**
 * A valid CR resolved against the cluster: the frozen inputs of its run(s).
 *
 * @param pools the MachineDeployments of a WorkersUpgrade (one run each); empty for a control plane
 * @param controlPlaneAtTarget whether every control-plane Machine runs the target already
 */
record ResolvedUpgrade(
    ClusterRef cluster,
    ClusterInventory inventory,
    NodeUpgradeTemplate template,
    MaintenanceWindow window,
    long soakSeconds,
    List<String> pools,
    String maxUnavailable,
    FailurePolicy failurePolicy,
    int maxFailures,
    boolean controlPlaneAtTarget) {}
