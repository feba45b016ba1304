package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import io.fabric8.generator.annotation.Default;
import io.fabric8.generator.annotation.Min;

/** How each node is drained (DrainOptions). */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class DrainSpec {
  @Min(1)
  @Default("300")
  @JsonPropertyDescription("How long evictions may be refused before onPdbBlocked applies.")
  private Long timeoutSeconds;

  @Default("true")
  @JsonPropertyDescription("Evict pods with emptyDir volumes (their data is lost).")
  private Boolean deleteEmptyDirData;

  @Default("false")
  @JsonPropertyDescription("Also evict pods no controller recreates.")
  private Boolean force;

  @Default("Fail")
  @JsonPropertyDescription("When a PodDisruptionBudget still blocks at the timeout: Fail the node (it is put back) or Delete the blocked pods.")
  private OnPdbBlocked onPdbBlocked;

  @Default("false")
  @JsonPropertyDescription("Skip the drain (single-node clusters); the node is still cordoned.")
  private Boolean skip;

  public Long getTimeoutSeconds() {
    return timeoutSeconds;
  }

  public DrainSpec setTimeoutSeconds(Long timeoutSeconds) {
    this.timeoutSeconds = timeoutSeconds;
    return this;
  }

  public Boolean getDeleteEmptyDirData() {
    return deleteEmptyDirData;
  }

  public DrainSpec setDeleteEmptyDirData(Boolean deleteEmptyDirData) {
    this.deleteEmptyDirData = deleteEmptyDirData;
    return this;
  }

  public Boolean getForce() {
    return force;
  }

  public DrainSpec setForce(Boolean force) {
    this.force = force;
    return this;
  }

  public OnPdbBlocked getOnPdbBlocked() {
    return onPdbBlocked;
  }

  public DrainSpec setOnPdbBlocked(OnPdbBlocked onPdbBlocked) {
    this.onPdbBlocked = onPdbBlocked;
    return this;
  }

  public Boolean getSkip() {
    return skip;
  }

  public DrainSpec setSkip(Boolean skip) {
    this.skip = skip;
    return this;
  }
}
