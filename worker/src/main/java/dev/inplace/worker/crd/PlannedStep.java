package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** One step of a planned node. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PlannedStep {
  @JsonPropertyDescription("Step name as on the command line: preflight, stage, cordon, drain, backup, install, restart, verify, uncordon, record; restore and release are compensations.")
  private String step;

  @JsonPropertyDescription("What the step does.")
  private String action;

  @JsonPropertyDescription("Name of the entry in plan.scripts the step runs on the host, if any.")
  private String script;

  @JsonPropertyDescription("True for a compensation: runs only if a later step fails.")
  private Boolean compensation;

  public PlannedStep() {}

  public PlannedStep(String step, String action, String script, boolean compensation) {
    this.step = step;
    this.action = action;
    this.script = script;
    this.compensation = compensation ? Boolean.TRUE : null;
  }

  public String getStep() {
    return step;
  }

  public PlannedStep setStep(String step) {
    this.step = step;
    return this;
  }

  public String getAction() {
    return action;
  }

  public PlannedStep setAction(String action) {
    this.action = action;
    return this;
  }

  public String getScript() {
    return script;
  }

  public PlannedStep setScript(String script) {
    this.script = script;
    return this;
  }

  public Boolean getCompensation() {
    return compensation;
  }

  public PlannedStep setCompensation(Boolean compensation) {
    this.compensation = compensation;
    return this;
  }
}
