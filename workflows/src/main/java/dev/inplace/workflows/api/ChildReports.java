package dev.inplace.workflows.api;

import io.temporal.workflow.SignalMethod;

/**
 * What a NodeUpgrade child tells its parent run (ControlPlaneUpgrade, WorkersUpgrade) while it
 * runs. Not an operator control: a signal only moves the parent along a path it would take anyway.
 */
public interface ChildReports {
  /** The signal's name, as a child sends it to its parent's run. */
  String NODE_STAGED = "nodeStaged";

  /**
   * A child asked to ({@link NodeUpgradeRequest#reportStaged()}) has staged its artifacts: the
   * parent, which prepares nodes ahead of their turn, starts preparing the next nodes only once the
   * nodes that started with their turn have staged, so their uploads never share the hosts' links
   * and the worker's CPU with the next nodes'. Ignored for a node the parent does not wait for:
   * the worst a stray signal can do is let preparation (which changes nothing a workload sees)
   * start a moment early.
   */
  @SignalMethod(name = NODE_STAGED)
  void nodeStaged(String node);
}
