package dev.inplace.workflows.api;

import java.util.List;

/**
 * What an upgrade would do, and what would stop it: the same answer from {@code inplace plan} (the
 * Plan workflow) and from a custom resource's {@code dryRun}.
 *
 * @param scope what was planned ({@link PlanWorkflow.PlanScope})
 * @param hostsInspected whether the hosts were read over SSH; false with {@code --offline}
 * @param windowOpensAt when the maintenance window next opens (ISO-8601), "now" when it is open,
 *     null without a window
 * @param waves nodes that start together: control planes one per wave, then each MachineDeployment's
 *     workers in windows of maxUnavailable (pools run side by side, so their waves share numbers)
 * @param nodes every planned Machine in start order, those already at the target included
 * @param findings preflight findings; an {@link Severity#ERROR} means the run would refuse
 * @param scripts the remote scripts the steps name, each rendered once
 */
public record UpgradePlan(
    ClusterRef cluster,
    String targetVersion,
    Distribution distribution,
    PlanWorkflow.PlanScope scope,
    boolean hostsInspected,
    String summary,
    String windowOpensAt,
    List<Wave> waves,
    List<PlannedNode> nodes,
    List<Finding> findings,
    List<Script> scripts) {

  /** Whether a finding would make the run refuse. */
  public boolean refused() {
    return findings.stream().anyMatch(f -> f.severity() == Severity.ERROR);
  }

  /** @param group {@code control-plane} or the MachineDeployment's name */
  public record Wave(int number, String group, List<String> nodes) {}

  /**
   * @param wave the node's wave; 0 when it is already at the target
   * @param action {@link #UPGRADE} or {@link #ALREADY_AT_TARGET}
   */
  public record PlannedNode(
      int order,
      int wave,
      String group,
      String machine,
      String node,
      NodeRole role,
      String currentVersion,
      String action,
      List<Step> steps) {}

  public static final String UPGRADE = "Upgrade";
  public static final String ALREADY_AT_TARGET = "AlreadyAtTarget";

  /**
   * @param script the name of the script it runs on the host (see {@link #scripts}), or null for a
   *     step done through the Kubernetes API
   * @param compensation true for a step that runs only when a later one fails
   */
  public record Step(String step, String description, String script, boolean compensation) {}

  /** @param command how it is run over SSH; the text is its stdin */
  public record Script(String name, String step, String command, String text) {}

  /** @param reason the failure type the run would use ({@code UpgradeFailures}), or a plan note */
  public record Finding(Severity severity, String reason, String node, String message) {}

  public enum Severity {
    ERROR,
    WARNING,
    INFO
  }
}
