package dev.inplace.workflows.api;

import java.util.List;

/**
 * Details carried by the failure of a NodeUpgrade workflow.
 *
 * @param failedStep the step that failed
 * @param reason the failure type (a constant of {@code UpgradeFailures}), also a condition reason
 * @param message what went wrong, for people
 * @param phase {@link NodePhase#ROLLED_BACK}, {@link NodePhase#FAILED} (nothing was changed) or
 *     {@link NodePhase#ROLLBACK_FAILED}
 * @param versionNow the version the node runs now, as last observed
 */
public record NodeFailure(
    String machineName,
    String nodeName,
    UpgradeStep failedStep,
    String reason,
    String message,
    NodePhase phase,
    String versionNow,
    List<StepRecord> steps) {}
