package dev.inplace.worker.extension;

import dev.inplace.workflows.api.NodeUpgradeRequest;

/** The NodeUpgrade runs UpdateMachine starts and follows (Temporal in the worker; a stand-in in tests). */
interface NodeRuns {

  enum State {
    NOT_FOUND,
    RUNNING,
    COMPLETED,
    FAILED,
    /** Temporal could not be asked. */
    UNKNOWN
  }

  /**
   * What a run is doing.
   *
   * @param detail for a running run its phase and step, for a failed one why it failed
   * @param nodeChanged for a failed run: whether it got as far as changing the node (false when it
   *     stopped in preflight, before anything was touched)
   */
  record Run(State state, String detail, boolean nodeChanged) {}

  Run find(String workflowId);

  /** Starts a run under {@code workflowId}; false when one is already there (nothing started). */
  boolean start(String workflowId, NodeUpgradeRequest request);
}
