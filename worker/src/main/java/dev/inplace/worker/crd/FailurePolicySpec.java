package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;

/** What a WorkersUpgrade does when a node fails. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class FailurePolicySpec {
  @Default("Halt")
  @JsonPropertyDescription("Halt: nodes in flight finish, no new node starts, the run waits for the operator. Continue: go on while at most maxFailures nodes have failed.")
  private FailurePolicyType type;

  @Min(0)
  @Default("0")
  @JsonPropertyDescription("With Continue: failed nodes tolerated before the run halts.")
  private Integer maxFailures;

  public FailurePolicySpec() {}

  public FailurePolicySpec(FailurePolicyType type, Integer maxFailures) {
    this.type = type;
    this.maxFailures = maxFailures;
  }

  public FailurePolicyType getType() {
    return type;
  }

  public FailurePolicySpec setType(FailurePolicyType type) {
    this.type = type;
    return this;
  }

  public Integer getMaxFailures() {
    return maxFailures;
  }

  public FailurePolicySpec setMaxFailures(Integer maxFailures) {
    this.maxFailures = maxFailures;
    return this;
  }
}
