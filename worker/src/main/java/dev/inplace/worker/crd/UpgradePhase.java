package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonProperty;
import java.util.Set;

/**
 * Where a ControlPlaneUpgrade or WorkersUpgrade stands ({@code status.phase}). Transitions:
 * Pending -> Failed (refused, nothing touched) | Planned (dryRun) | Waiting (workers: the control
 * plane is still being upgraded) | Running; Running <-> Paused; Running -> Halted (a node failed,
 * the operator decides) -> Running; Running | Paused | Halted -> Aborting (CR deleted) -> Aborted;
 * any run -> Succeeded | Failed | Aborted.
 */
public enum UpgradePhase {
  @JsonProperty("Pending")
  PENDING,
  /** dryRun: status.plan holds what would be done; nothing was started. */
  @JsonProperty("Planned")
  PLANNED,
  /** A WorkersUpgrade whose control plane is not at the target yet, while a ControlPlaneUpgrade for it runs. */
  @JsonProperty("Waiting")
  WAITING,
  @JsonProperty("Running")
  RUNNING,
  @JsonProperty("Paused")
  PAUSED,
  /** A node failed: in-flight nodes finish, no new node starts until retryNode, skipNode or abort. */
  @JsonProperty("Halted")
  HALTED,
  @JsonProperty("Aborting")
  ABORTING,
  @JsonProperty("Succeeded")
  SUCCEEDED,
  @JsonProperty("Failed")
  FAILED,
  @JsonProperty("Aborted")
  ABORTED;

  private static final Set<UpgradePhase> TERMINAL = Set.of(SUCCEEDED, FAILED, ABORTED);

  /** Whether nothing more will happen for this CR (its runs, if any, have ended). */
  public boolean terminal() {
    return TERMINAL.contains(this);
  }
}
