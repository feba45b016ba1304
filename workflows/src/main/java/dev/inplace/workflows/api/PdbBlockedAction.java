package dev.inplace.workflows.api;

/** What a drain does when a PodDisruptionBudget still forbids an eviction at the drain timeout. */
public enum PdbBlockedAction {
  /** Fail the node (default): it is uncordoned, and the parent run waits for the operator. */
  FAIL,
  /** Delete the blocked pods instead of evicting them (bypasses the budget; an explicit choice). */
  DELETE
}
