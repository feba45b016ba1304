package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.ValidationRule;
import io.fabric8.kubernetes.api.model.IntOrString;
import java.util.List;

/** A WorkersUpgrade adds which pools, how many nodes at once, and what a failure does. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class WorkersUpgradeSpec extends UpgradeSpec<WorkersUpgradeSpec> {

  @JsonPropertyDescription("MachineDeployments to upgrade, each by its own run (they run in parallel); empty means every MachineDeployment of the cluster.")
  private List<@io.fabric8.generator.annotation.Pattern(NAME_PATTERN) String> machineDeployments;

  @ValidationRule(
      value = "type(self) == int ? self >= 1 : self.matches('^([1-9][0-9]{0,5}|([1-9][0-9]?|100)%)$')",
      message = "maxUnavailable must be a count of at least 1 or a percent from 1% to 100%")
  @JsonPropertyDescription("Nodes of a MachineDeployment upgraded at once: a count (2) or a percent of the pool (25%); default 1.")
  private IntOrString maxUnavailable;

  @JsonPropertyDescription("What a failed node does to the run.")
  private FailurePolicySpec failurePolicy;

  public List<String> getMachineDeployments() {
    return machineDeployments;
  }

  public WorkersUpgradeSpec setMachineDeployments(List<String> machineDeployments) {
    this.machineDeployments = machineDeployments;
    return this;
  }

  public IntOrString getMaxUnavailable() {
    return maxUnavailable;
  }

  public WorkersUpgradeSpec setMaxUnavailable(IntOrString maxUnavailable) {
    this.maxUnavailable = maxUnavailable;
    return this;
  }

  public FailurePolicySpec getFailurePolicy() {
    return failurePolicy;
  }

  public WorkersUpgradeSpec setFailurePolicy(FailurePolicySpec failurePolicy) {
    this.failurePolicy = failurePolicy;
    return this;
  }
}
