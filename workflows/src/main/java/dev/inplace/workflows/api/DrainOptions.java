package dev.inplace.workflows.api;

/**
 * How to drain a node.
 *
 * @param timeoutSeconds how long evictions may be refused before {@link #onBlocked} applies
 * @param deleteEmptyDirData allow evicting pods with emptyDir volumes (their data is lost)
 * @param force also evict pods no controller will recreate (bare pods)
 * @param onBlocked what to do when the timeout passes with pods still protected by a budget
 * @param skip skip the drain entirely (single-node clusters); the node is still cordoned
 */
public record DrainOptions(
    long timeoutSeconds,
    boolean deleteEmptyDirData,
    boolean force,
    PdbBlockedAction onBlocked,
    boolean skip) {
  public DrainOptions {
    if (timeoutSeconds < 1) {
      throw new IllegalArgumentException("drain timeout must be at least 1 second");
    }
    if (onBlocked == null) {
      onBlocked = PdbBlockedAction.FAIL;
    }
  }

  public static DrainOptions defaults() {
    return new DrainOptions(300, true, false, PdbBlockedAction.FAIL, false);
  }
}
