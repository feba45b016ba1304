package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One workflow run started for the CR (a WorkersUpgrade has one per MachineDeployment). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RunRecord {
  private String workflowId;

  @JsonPropertyDescription("The MachineDeployment of a WorkersUpgrade run.")
  private String machineDeployment;

  @JsonPropertyDescription("The version the run's nodes ran when it started.")
  private String fromVersion;

  @JsonPropertyDescription("The run's own phase, e.g. Upgrading, Halted, Succeeded (from its progress query).")
  private String phase;

  @JsonPropertyDescription("Failure type when the run failed or was refused.")
  private String reason;

  private String message;

  public RunRecord() {}

  public RunRecord(String workflowId, String machineDeployment) {
    this.workflowId = workflowId;
    this.machineDeployment = machineDeployment;
  }

  public String getWorkflowId() {
    return workflowId;
  }

  public RunRecord setWorkflowId(String workflowId) {
    this.workflowId = workflowId;
    return this;
  }

  public String getMachineDeployment() {
    return machineDeployment;
  }

  public RunRecord setMachineDeployment(String machineDeployment) {
    this.machineDeployment = machineDeployment;
    return this;
  }

  public String getFromVersion() {
    return fromVersion;
  }

  public RunRecord setFromVersion(String fromVersion) {
    this.fromVersion = fromVersion;
    return this;
  }

  public String getPhase() {
    return phase;
  }

  public RunRecord setPhase(String phase) {
    this.phase = phase;
    return this;
  }

  public String getReason() {
    return reason;
  }

  public RunRecord setReason(String reason) {
    this.reason = reason;
    return this;
  }

  public String getMessage() {
    return message;
  }

  public RunRecord setMessage(String message) {
    this.message = message;
    return this;
  }
}
