package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One node of the run, as its parent workflow reports it (a row of {@code status.nodes}). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NodeRecord {
  private String machine;
  private String node;

  @JsonPropertyDescription("ControlPlane or Worker.")
  private String role;

  @JsonPropertyDescription("MachineDeployment of a worker.")
  private String pool;

  @JsonPropertyDescription("Pending, Upgrading, RollingBack, Upgraded, RolledBack, Failed, RollbackFailed or Skipped.")
  private String phase;

  @JsonPropertyDescription("Step in flight (from the node's NodeUpgrade run), or the step it failed at.")
  private String step;

  @JsonPropertyDescription("RFC 3339 time the node's upgrade started.")
  private String started;

  @JsonPropertyDescription("RFC 3339 time it finished.")
  private String finished;

  @JsonPropertyDescription("Failure type when it failed.")
  private String reason;

  private String message;

  @JsonPropertyDescription("ID of the node's NodeUpgrade workflow.")
  private String workflowId;

  public String getMachine() {
    return machine;
  }

  public NodeRecord setMachine(String machine) {
    this.machine = machine;
    return this;
  }

  public String getNode() {
    return node;
  }

  public NodeRecord setNode(String node) {
    this.node = node;
    return this;
  }

  public String getRole() {
    return role;
  }

  public NodeRecord setRole(String role) {
    this.role = role;
    return this;
  }

  public String getPool() {
    return pool;
  }

  public NodeRecord setPool(String pool) {
    this.pool = pool;
    return this;
  }

  public String getPhase() {
    return phase;
  }

  public NodeRecord setPhase(String phase) {
    this.phase = phase;
    return this;
  }

  public String getStep() {
    return step;
  }

  public NodeRecord setStep(String step) {
    this.step = step;
    return this;
  }

  public String getStarted() {
    return started;
  }

  public NodeRecord setStarted(String started) {
    this.started = started;
    return this;
  }

  public String getFinished() {
    return finished;
  }

  public NodeRecord setFinished(String finished) {
    this.finished = finished;
    return this;
  }

  public String getReason() {
    return reason;
  }

  public NodeRecord setReason(String reason) {
    this.reason = reason;
    return this;
  }

  public String getMessage() {
    return message;
  }

  public NodeRecord setMessage(String message) {
    this.message = message;
    return this;
  }

  public String getWorkflowId() {
    return workflowId;
  }

  public NodeRecord setWorkflowId(String workflowId) {
    this.workflowId = workflowId;
    return this;
  }
}
