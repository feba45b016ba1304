package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonProperty;
import dev.inplace.workflows.api.FailurePolicy;

/** The failure policy of a WorkersUpgrade as the CR spells it. */
public enum FailurePolicyType {
  @JsonProperty("Halt")
  HALT(FailurePolicy.HALT),
  @JsonProperty("Continue")
  CONTINUE(FailurePolicy.CONTINUE);

  private final FailurePolicy policy;

  FailurePolicyType(FailurePolicy policy) {
    this.policy = policy;
  }

  public FailurePolicy policy() {
    return policy;
  }
}
