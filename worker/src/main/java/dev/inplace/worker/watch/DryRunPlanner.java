package dev.inplace.worker.watch;

import dev.inplace.activities.host.PlanActivitiesImpl;
import dev.inplace.worker.crd.PlannedFinding;
import dev.inplace.worker.crd.PlannedNode;
import dev.inplace.worker.crd.PlannedScript;
import dev.inplace.worker.crd.PlannedStep;
import dev.inplace.worker.crd.UpgradePlan;
import dev.inplace.workflows.api.PlanActivities.PlanSlot;
import dev.inplace.workflows.api.PlanActivities.RenderStepsRequest;
import dev.inplace.workflows.api.PlanActivities.RenderedSteps;
import dev.inplace.workflows.api.PlanWorkflow.PlanRequest;
import dev.inplace.workflows.api.PlanWorkflow.PlanScope;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.UpgradePlanner;
import java.util.List;
import java.util.Map;

/**
 * The plan of a dry run, made by the same code as {@code inplace plan} (the Plan workflow): {@link
 * UpgradePlanner} orders the nodes as the runs do and applies their preflight rules to the
 * inventory, {@link PlanActivitiesImpl} renders each node's steps and scripts for the run's
 * distribution. A dryRun reads nothing beyond the inventory (no Node, budget or host reads), so its
 * findings are the ones the inventory shows; {@code inplace plan} adds the rest.
 */
final class DryRunPlanner {
  private DryRunPlanner() {}

  static UpgradePlan plan(ResolvedUpgrade resolved, boolean controlPlane, long nowMillis) throws SpecRefusal {
    PlanRequest request = request(resolved, controlPlane);
    List<PlanSlot> slots = UpgradePlanner.slots(request, resolved.inventory(), Map.of());
    RenderedSteps rendered;
    try {
      rendered = PlanActivitiesImpl.render(new RenderStepsRequest(resolved.template(), slots));
    } catch (IllegalArgumentException e) {
      throw new SpecRefusal(UpgradeFailures.INVALID_REQUEST, "dry run: " + e.getMessage());
    }
    var findings = UpgradePlanner.findings(
        request, resolved.inventory(), slots, UpgradePlanner.Observations.inventoryOnly(), nowMillis);
    return toResource(UpgradePlanner.assemble(request, slots, rendered, findings, false, nowMillis));
  }

  /** The Plan workflow's request for this CR: its scope, pools, window and maxUnavailable, no host reads. */
  static PlanRequest request(ResolvedUpgrade resolved, boolean controlPlane) {
    return new PlanRequest(resolved.cluster(), resolved.template(),
        controlPlane ? PlanScope.CONTROL_PLANE : PlanScope.WORKERS, controlPlane ? List.of() : resolved.pools(),
        resolved.maxUnavailable(), resolved.window(), false);
  }

  /** The plan in the CR's status shape. */
  static UpgradePlan toResource(dev.inplace.workflows.api.UpgradePlan plan) {
    List<PlannedNode> nodes = plan.nodes().stream()
        .map(n -> new PlannedNode()
            .setOrder(n.order())
            .setWave(n.wave())
            .setMachine(n.machine())
            .setNode(n.node())
            .setRole(Texts.camel(n.role()))
            .setPool(UpgradePlanner.CONTROL_PLANE.equals(n.group()) ? null : n.group())
            .setCurrentVersion(n.currentVersion())
            .setAction(n.action())
            .setSteps(n.steps().stream()
                .map(s -> new PlannedStep(s.step(), s.description(), s.script(), s.compensation()))
                .toList()))
        .toList();
    List<PlannedScript> scripts = plan.scripts().stream()
        .map(s -> new PlannedScript(s.name(), s.step(), s.command(), s.text()))
        .toList();
    List<PlannedFinding> findings = plan.findings().stream()
        .map(f -> new PlannedFinding(Texts.camel(f.severity()), f.reason(), f.node(), f.message()))
        .toList();
    return new UpgradePlan().setSummary(plan.summary()).setWindowOpensAt(plan.windowOpensAt())
        .setNodes(new java.util.ArrayList<>(nodes)).setFindings(new java.util.ArrayList<>(findings))
        .setScripts(new java.util.ArrayList<>(scripts));
  }
}
