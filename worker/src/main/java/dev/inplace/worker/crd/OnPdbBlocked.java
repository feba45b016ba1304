package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.inplace.workflows.api.PdbBlockedAction;

/** What a drain does when a PodDisruptionBudget still forbids an eviction at its timeout. */
public enum OnPdbBlocked {
  @JsonProperty("Fail")
  FAIL(PdbBlockedAction.FAIL),
  @JsonProperty("Delete")
  DELETE(PdbBlockedAction.DELETE);

  private final PdbBlockedAction action;

  OnPdbBlocked(PdbBlockedAction action) {
    this.action = action;
  }

  public PdbBlockedAction action() {
    return action;
  }
}
