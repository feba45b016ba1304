package dev.inplace.sandbox.demo;

import java.util.List;

/**
 * The demo's result; printed as the last line with {@code --json}. {@code failed} counts nodes whose
 * upgrade failed (rolled back or not), {@code rolledBack} those put back on their previous version.
 */
public record DemoSummary(
    int nodes,
    long upgraded,
    long failed,
    long rolledBack,
    long notStarted,
    String version,
    double wallSeconds,
    List<NodeOutcome> results) {

  public boolean allUpgraded() {
    return upgraded == nodes;
  }
}
