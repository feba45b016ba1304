package dev.inplace.workflows.api;

/** Where a node's upgrade stands as a whole. */
public enum NodePhase {
  PENDING,
  UPGRADING,
  ROLLING_BACK,
  UPGRADED,
  /** Failed, and put back on its previous version, schedulable. */
  ROLLED_BACK,
  /** Failed before anything changed on the node. */
  FAILED,
  /** Failed and could not be fully put back: needs an operator (reason says what is left). */
  ROLLBACK_FAILED,
  SKIPPED
}
