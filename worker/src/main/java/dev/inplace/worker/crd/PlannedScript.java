package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;

/** A rendered remote script of a plan. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class PlannedScript {
  private String name;
  private String step;

  @JsonPropertyDescription("The command run over SSH; the script text is its stdin.")
  private String command;

  private String text;

  public PlannedScript() {}

  public PlannedScript(String name, String step, String command, String text) {
    this.name = name;
    this.step = step;
    this.command = command;
    this.text = text;
  }

  public String getName() {
    return name;
  }

  public PlannedScript setName(String name) {
    this.name = name;
    return this;
  }

  public String getStep() {
    return step;
  }

  public PlannedScript setStep(String step) {
    this.step = step;
    return this;
  }

  public String getCommand() {
    return command;
  }

  public PlannedScript setCommand(String command) {
    this.command = command;
    return this;
  }

  public String getText() {
    return text;
  }

  public PlannedScript setText(String text) {
    this.text = text;
    return this;
  }
}
