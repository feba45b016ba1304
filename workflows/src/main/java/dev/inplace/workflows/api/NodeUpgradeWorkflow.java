package dev.inplace.workflows.api;

import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.SignalMethod;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;

/**
 * Upgrades one Machine's node in place, as a saga: preflight, stage, backup, cordon, drain, install,
 * restart, verify, uncordon, record (runs started before node-upgrade-backs-up-before-cordon back
 * up after drain). A failure from cordon to verify runs the compensations in reverse so the node is
 * back on its previous version and schedulable. ID: {@link
 * WorkflowIds#nodeUpgrade}.
 */
@WorkflowInterface
public interface NodeUpgradeWorkflow {

  @WorkflowMethod
  NodeUpgradeResult upgrade(NodeUpgradeRequest request);

  @QueryMethod
  NodeProgress progress();

  /**
   * The parent's permit: a run whose request says {@link NodeUpgradeRequest#awaitPermit()} waits
   * for it after preflight, stage and backup, before it cordons (the parent's window bounds disruption, not
   * preparation). Ignored by every other run; a permit that comes early is kept.
   */
  @SignalMethod
  void permit();
}
