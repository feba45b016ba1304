package dev.inplace.workflows.api;

/** The state of one step of a node's upgrade. */
public enum StepStatus {
  RUNNING,
  DONE,
  /** Not needed: the observed state already matched (idempotent re-run, artifact already staged). */
  SKIPPED,
  FAILED
}
