package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.HostInspectRequest;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaxUnavailable;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodesRequest;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.PlanActivities;
import dev.inplace.workflows.api.PlanActivities.PlanSlot;
import dev.inplace.workflows.api.PlanActivities.RenderStepsRequest;
import dev.inplace.workflows.api.PlanActivities.RenderedSteps;
import dev.inplace.workflows.api.PlanWorkflow;
import dev.inplace.workflows.api.UpgradePlan;
import dev.inplace.workflows.api.UpgradePlan.Finding;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.impl.NodePreflight.VersionMatch;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.Promise;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;

/**
 * The Plan workflow: reads, never writes. It calls only read-only activities (describeCluster,
 * inspectNodes, listBlockingBudgets, inspectHost, renderSteps) and hands what they return to
 * {@link UpgradePlanner}, which orders the nodes as the runs do ({@link RunOrder}) and applies the
 * runs' own preflight rules. A read that fails becomes a finding, not a failed plan; only a cluster
 * that cannot be read at all fails it.
 */
public class PlanWorkflowImpl implements PlanWorkflow {
  private static final Logger log = Workflow.getLogger(PlanWorkflowImpl.class);

  private final ClusterApiActivities clusterApi =
      Workflow.newActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.planRead());
  private final NodeActivities nodes = Workflow.newActivityStub(NodeActivities.class, ActivityOptionsCatalog.planRead());
  private final HostActivities hosts = Workflow.newActivityStub(HostActivities.class, ActivityOptionsCatalog.planRead());
  private final PlanActivities render = Workflow.newActivityStub(PlanActivities.class, ActivityOptionsCatalog.planRead());

  @Override
  public UpgradePlan plan(PlanRequest request) {
    validate(request);
    // The rule of the runs this plan stands for (parent-k0s-node-version); plans recorded before it compare exactly.
    VersionMatch versions = ClusterPreflight.versionMatch();
    ClusterInventory inventory;
    try {
      inventory = clusterApi.describeCluster(request.cluster());
    } catch (ActivityFailure e) {
      throw UpgradeFailures.nonRetryable(Failures.typeOf(e, UpgradeFailures.PREFLIGHT_FAILED),
          "reading cluster " + request.cluster() + " failed: " + Failures.describe(e));
    }
    List<String> names = planned(request, inventory);
    NodesState states = null;
    String nodesError = null;
    try {
      states = nodes.inspectNodes(new NodesRequest(request.cluster(), names));
    } catch (ActivityFailure e) {
      nodesError = Failures.describe(e);
    }
    Map<String, String> kubelets = new LinkedHashMap<>();
    if (states != null) {
      for (NodeState s : states.nodes()) {
        if (s.kubeletVersion() != null) {
          kubelets.put(s.nodeName(), s.kubeletVersion());
        }
      }
    }
    List<PlanSlot> slots = UpgradePlanner.slots(request, inventory, kubelets, versions);

    Map<String, Promise<HostFacts>> inspections = new LinkedHashMap<>();
    if (request.inspectHosts()) {
      for (PlanSlot slot : slots) {
        NodeUpgradeRequest child = childOrNull(request, slot.machine());
        if (slot.upgrade() && child != null) {
          NodeRole role = slot.machine().role();
          inspections.put(slot.machine().nodeName(), Async.function(hosts::inspectHost, new HostInspectRequest(
              child.hostAccess(), child.distribution(), role, child.profile(), child.artifacts())));
        }
      }
    }
    BudgetReport budgets = null;
    String budgetsError = null;
    try {
      budgets = nodes.listBlockingBudgets(request.cluster());
    } catch (ActivityFailure e) {
      budgetsError = Failures.describe(e);
    }
    Map<String, HostFacts> facts = new LinkedHashMap<>();
    Map<String, String> hostErrors = new LinkedHashMap<>();
    for (Map.Entry<String, Promise<HostFacts>> inspection : inspections.entrySet()) {
      try {
        facts.put(inspection.getKey(), inspection.getValue().get());
      } catch (ActivityFailure e) {
        hostErrors.put(inspection.getKey(), Failures.typeOf(e, UpgradeFailures.HOST_UNREACHABLE) + ": " + Failures.describe(e));
      }
    }
    RenderedSteps rendered = render.renderSteps(new RenderStepsRequest(request.template(), slots));
    long now = Workflow.currentTimeMillis();
    UpgradePlanner.Observations seen = new UpgradePlanner.Observations(
        states, nodesError, request.inspectHosts(), facts, hostErrors, budgets, budgetsError);
    List<Finding> findings = UpgradePlanner.findings(request, inventory, slots, seen, now, versions);
    UpgradePlan plan = UpgradePlanner.assemble(request, slots, rendered, findings, request.inspectHosts(), now);
    log.info("plan {}: {}", Workflow.getInfo().getWorkflowId(), plan.summary());
    return plan;
  }

  private static void validate(PlanRequest request) {
    if (request == null || request.cluster() == null || request.template() == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, "a cluster and a node template are required");
    }
    if (!KubeVersion.isValid(request.template().targetVersion())) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST,
          "'" + request.template().targetVersion() + "' is not a Kubernetes version like v1.31.2+k3s1");
    }
    try {
      MaxUnavailable.parse(request.maxUnavailable() == null ? "1" : request.maxUnavailable());
    } catch (IllegalArgumentException e) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, e.getMessage());
    }
  }

  /** The node names the plan reads: every control plane and every worker of the planned pools. */
  private static List<String> planned(PlanRequest request, ClusterInventory inventory) {
    List<String> names = new ArrayList<>();
    if (request.scope().controlPlane()) {
      RunOrder.controlPlanes(inventory).forEach(m -> names.add(m.nodeName()));
    }
    if (request.scope().workers()) {
      for (String pool : UpgradePlanner.pools(request, inventory)) {
        RunOrder.pool(inventory, pool).forEach(m -> names.add(m.nodeName()));
      }
    }
    return names;
  }

  private static NodeUpgradeRequest childOrNull(PlanRequest request, MachineInfo m) {
    try {
      return request.template().forNode(m.target(request.cluster()));
    } catch (IllegalArgumentException e) {
      return null; // reported as a finding
    }
  }
}
