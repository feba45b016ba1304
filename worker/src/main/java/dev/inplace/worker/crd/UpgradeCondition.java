package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonIgnore;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Required;
import java.util.Objects;

/**
 * A condition in the shape of metav1.Condition. Reasons are failure types of UpgradeFailures or
 * the lifecycle reasons of {@code dev.inplace.worker.watch.Reasons}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class UpgradeCondition {
  public static final String READY = "Ready";
  public static final String PROGRESSING = "Progressing";
  public static final String FAILED = "Failed";
  public static final String PAUSED = "Paused";
  /** False while the spec differs from the frozen one in more than {@code paused}: that change is refused. */
  public static final String SPEC_ACCEPTED = "SpecAccepted";
  /** True when the run skips the drain on its own: a one-node cluster has nowhere to evict to. */
  public static final String DRAIN_SKIPPED = "DrainSkipped";

  @Required
  @JsonPropertyDescription("Ready, Progressing, Failed, Paused, SpecAccepted or DrainSkipped.")
  private String type;

  @Required
  @JsonPropertyDescription("True, False or Unknown.")
  private String status;

  @JsonPropertyDescription("CamelCase reason: a failure type (e.g. UnsupportedVersionSkew) or a lifecycle reason (e.g. Started).")
  private String reason;

  private String message;

  @JsonPropertyDescription("RFC 3339 time of the last change of status.")
  private String lastTransitionTime;

  private Long observedGeneration;

  public UpgradeCondition() {}

  public UpgradeCondition(String type, boolean status, String reason, String message) {
    this.type = type;
    this.status = status ? "True" : "False";
    this.reason = reason;
    this.message = message;
  }

  public String getType() {
    return type;
  }

  public UpgradeCondition setType(String type) {
    this.type = type;
    return this;
  }

  public String getStatus() {
    return status;
  }

  public UpgradeCondition setStatus(String status) {
    this.status = status;
    return this;
  }

  public String getReason() {
    return reason;
  }

  public UpgradeCondition setReason(String reason) {
    this.reason = reason;
    return this;
  }

  public String getMessage() {
    return message;
  }

  public UpgradeCondition setMessage(String message) {
    this.message = message;
    return this;
  }

  public String getLastTransitionTime() {
    return lastTransitionTime;
  }

  public UpgradeCondition setLastTransitionTime(String lastTransitionTime) {
    this.lastTransitionTime = lastTransitionTime;
    return this;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public UpgradeCondition setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
    return this;
  }

  @JsonIgnore
  public boolean isTrue() {
    return "True".equals(status);
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof UpgradeCondition c
        && Objects.equals(type, c.type)
        && Objects.equals(status, c.status)
        && Objects.equals(reason, c.reason)
        && Objects.equals(message, c.message)
        && Objects.equals(lastTransitionTime, c.lastTransitionTime)
        && Objects.equals(observedGeneration, c.observedGeneration);
  }

  @Override
  public int hashCode() {
    return Objects.hash(type, status, reason, message, lastTransitionTime, observedGeneration);
  }

  @Override
  public String toString() {
    return type + "=" + status + " (" + reason + "): " + message;
  }
}
