package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** A preflight finding of a plan: what would refuse the run, slow it, or is worth knowing. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PlannedFinding {
  @JsonPropertyDescription("Error (the run would refuse), Warning or Info.")
  private String severity;

  @JsonPropertyDescription("The failure type the run would use (docs/failure-types.md), or a plan note.")
  private String reason;

  @JsonPropertyDescription("The node it concerns, if one.")
  private String node;

  private String message;

  public PlannedFinding() {}

  public PlannedFinding(String severity, String reason, String node, String message) {
    this.severity = severity;
    this.reason = reason;
    this.node = node;
    this.message = message;
  }

  public String getSeverity() {
    return severity;
  }

  public PlannedFinding setSeverity(String severity) {
    this.severity = severity;
    return this;
  }

  public String getReason() {
    return reason;
  }

  public PlannedFinding setReason(String reason) {
    this.reason = reason;
    return this;
  }

  public String getNode() {
    return node;
  }

  public PlannedFinding setNode(String node) {
    this.node = node;
    return this;
  }

  public String getMessage() {
    return message;
  }

  public PlannedFinding setMessage(String message) {
    this.message = message;
    return this;
  }
}
