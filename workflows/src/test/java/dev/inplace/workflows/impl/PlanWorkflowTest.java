package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.concat;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.verifyNoMoreInteractions;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.PlanActivities;
import dev.inplace.workflows.api.PlanActivities.RenderedSteps;
import dev.inplace.workflows.api.PlanWorkflow;
import dev.inplace.workflows.api.PlanWorkflow.PlanRequest;
import dev.inplace.workflows.api.PlanWorkflow.PlanScope;
import dev.inplace.workflows.api.UpgradePlan;
import dev.inplace.workflows.api.UpgradePlan.Severity;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * The Plan workflow against mocked activities: it calls read-only activities only (the mocks fail
 * the test on anything else), orders nodes as the runs do, and turns failed reads into findings.
 */
class PlanWorkflowTest {
  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = mock(ClusterApiActivities.class, withSettings().withoutAnnotations());
  private final PlanActivities render = mock(PlanActivities.class, withSettings().withoutAnnotations());
  private final String workflowId = WorkflowIds.plan("fleet", "edge-1", Fixtures.TO, "test");

  @BeforeEach
  void aClusterOfThreeControlPlanesAndFourWorkers() {
    doReturn(inventory(concat(controlPlanes(3, FROM), workers(POOL, 4, FROM)))).when(capi).describeCluster(any());
    when(nodes.inspectNodes(any())).thenAnswer(call -> {
      NodeActivities.NodesRequest r = call.getArgument(0);
      return new NodesState(r.nodeNames().stream().map(n -> Fixtures.readyAt(n, FROM)).toList(), List.of());
    });
    when(nodes.listBlockingBudgets(any())).thenReturn(new BudgetReport(List.of(new BlockingBudget("apps", "db", 0, 2))));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    when(render.renderSteps(any())).thenAnswer(call -> {
      PlanActivities.RenderStepsRequest r = call.getArgument(0);
      return new RenderedSteps(r.slots().stream()
          .map(s -> s.upgrade() ? List.of(new UpgradePlan.Step("install", "install", "install", false)) : List.<UpgradePlan.Step>of())
          .toList(), List.of(new UpgradePlan.Script("install", "install", "bash -s", "#!/bin/bash\n")));
    });
  }

  private PlanWorkflow start(TestWorkflowEnvironment env, Worker worker) {
    worker.registerWorkflowImplementationTypes(PlanWorkflowImpl.class);
    worker.registerActivitiesImplementations(hosts, nodes, capi, render);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(PlanWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  private static PlanRequest request(boolean inspectHosts) {
    return new PlanRequest(Fixtures.CLUSTER, ParentFixtures.template(), PlanScope.CLUSTER, List.of(), "2", null, inspectHosts);
  }

  /** Every activity method the plan may call: reads. Anything else on the mocks fails verifyNoMoreInteractions. */
  private void verifyOnlyReads(int hostInspections) {
    verify(capi).describeCluster(any());
    verify(nodes).inspectNodes(any());
    verify(nodes).listBlockingBudgets(any());
    verify(hosts, times(hostInspections)).inspectHost(any());
    verify(render).renderSteps(any());
    verifyNoMoreInteractions(capi, nodes, hosts, render);
  }

  @Test
  void aPlanInspectsEveryHostToUpgradeAndCallsReadOnlyActivitiesOnly(TestWorkflowEnvironment env, Worker worker) {
    UpgradePlan plan = start(env, worker).plan(request(true));
    assertEquals(List.of("cp-1", "cp-2", "cp-3", "worker-a-1", "worker-a-2", "worker-a-3", "worker-a-4"),
        plan.nodes().stream().map(UpgradePlan.PlannedNode::node).toList());
    assertEquals(List.of(1, 2, 3, 4, 4, 5, 5), plan.nodes().stream().map(UpgradePlan.PlannedNode::wave).toList());
    assertTrue(plan.hostsInspected());
    assertTrue(plan.findings().stream().anyMatch(f -> f.reason().equals(UpgradeFailures.DRAIN_BLOCKED)));
    assertFalse(plan.refused(), plan.findings().toString());
    verifyOnlyReads(7);
  }

  @Test
  void offlineSkipsTheHostsAndSaysSo(TestWorkflowEnvironment env, Worker worker) {
    UpgradePlan plan = start(env, worker).plan(request(false));
    assertFalse(plan.hostsInspected());
    assertTrue(plan.findings().stream().anyMatch(f -> f.reason().equals(UpgradePlanner.HOSTS_NOT_INSPECTED)));
    verify(hosts, never()).inspectHost(any());
    verifyOnlyReads(0);
  }

  @Test
  void anUnreachableHostIsAnErrorFindingNotAFailedPlan(TestWorkflowEnvironment env, Worker worker) {
    when(hosts.inspectHost(argThat(r -> r != null && r.host().nodeName().equals("cp-2"))))
        .thenThrow(ApplicationFailure.newNonRetryableFailure("connection refused", UpgradeFailures.HOST_UNREACHABLE));
    UpgradePlan plan = start(env, worker).plan(request(true));
    assertTrue(plan.refused());
    UpgradePlan.Finding f = plan.findings().stream().filter(x -> x.severity() == Severity.ERROR).findFirst().orElseThrow();
    assertEquals(UpgradeFailures.HOST_UNREACHABLE, f.reason());
    assertEquals("cp-2", f.node());
    assertTrue(f.message().contains("connection refused"), f.message());
  }

  @Test
  void aBadMaxUnavailableFailsThePlanBeforeAnyRead(TestWorkflowEnvironment env, Worker worker) {
    PlanWorkflow stub = start(env, worker);
    PlanRequest bad = new PlanRequest(Fixtures.CLUSTER, ParentFixtures.template(), PlanScope.CLUSTER, List.of(), "0%", null, true);
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> stub.plan(bad));
    assertEquals(UpgradeFailures.INVALID_REQUEST, ((ApplicationFailure) e.getCause()).getType());
    verifyNoMoreInteractions(capi, nodes, hosts, render);
  }

  /** Records the committed replay history of a plan (run with {@code -Dhistories.update=true}). */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordReplayHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded("plan-cluster-inspected.json");
    PlanWorkflow stub = start(env, worker);
    var execution = WorkflowClient.start(stub::plan, request(true));
    env.getWorkflowClient().newUntypedWorkflowStub(workflowId).getResult(UpgradePlan.class);
    HistoryFixtures.record(env, workflowId, execution.getRunId(), "plan-cluster-inspected.json");
  }

  /**
   * A k0s cluster to {@code v1.31.2+k0s.1} whose controllers are done (Nodes report {@code
   * v1.31.2+k0s}): the workers plan is not refused as if the control plane were behind, and a
   * worker whose Machine records the release is not planned (change parent-k0s-node-version).
   */
  private PlanRequest k0sWorkersPlan() {
    List<dev.inplace.workflows.api.MachineInfo> machines = new java.util.ArrayList<>();
    for (int i = 1; i <= 3; i++) {
      machines.add(K0sParentUpgradeTest.machine("cp-" + i, dev.inplace.workflows.api.NodeRole.CONTROL_PLANE,
          K0sParentUpgradeTest.TO, K0sParentUpgradeTest.REPORTED));
    }
    machines.add(K0sParentUpgradeTest.machine(POOL + "-1", dev.inplace.workflows.api.NodeRole.WORKER,
        K0sParentUpgradeTest.PREVIOUS_BUILD, K0sParentUpgradeTest.REPORTED));
    machines.add(K0sParentUpgradeTest.machine(POOL + "-2", dev.inplace.workflows.api.NodeRole.WORKER,
        K0sParentUpgradeTest.TO, K0sParentUpgradeTest.REPORTED));
    doReturn(inventory(machines)).when(capi).describeCluster(any());
    org.mockito.Mockito.doAnswer(call -> {
      NodeActivities.NodesRequest r = call.getArgument(0);
      return new NodesState(r.nodeNames().stream().map(n -> Fixtures.readyAt(n, K0sParentUpgradeTest.REPORTED)).toList(),
          List.of());
    }).when(nodes).inspectNodes(any());
    doReturn(K0sNodeUpgradeWorkflowTest.hostWithOldRelease()).when(hosts).inspectHost(any());
    return new PlanRequest(Fixtures.CLUSTER, K0sParentUpgradeTest.k0sTemplate(), PlanScope.WORKERS, List.of(POOL), "1",
        null, true);
  }

  @Test
  void aK0sWorkersPlanToAPlusK0sOneReleaseIsNotRefusedAndLeavesDoneNodesOut(TestWorkflowEnvironment env, Worker worker) {
    PlanRequest request = k0sWorkersPlan();
    UpgradePlan plan = start(env, worker).plan(request);
    assertFalse(plan.refused(), plan.findings().toString());
    assertEquals(List.of(UpgradePlan.UPGRADE, UpgradePlan.ALREADY_AT_TARGET),
        plan.nodes().stream().map(UpgradePlan.PlannedNode::action).toList());
    verify(hosts, times(1)).inspectHost(argThat(r -> r.host().nodeName().equals(POOL + "-1")));
  }

  /** Records the plan history of change parent-k0s-node-version (run with {@code -Dhistories.update=true}). */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordK0sNextBuildHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded("plan-k0s-next-build.json");
    PlanRequest request = k0sWorkersPlan();
    PlanWorkflow stub = start(env, worker);
    var execution = WorkflowClient.start(stub::plan, request);
    assertFalse(env.getWorkflowClient().newUntypedWorkflowStub(workflowId).getResult(UpgradePlan.class).refused());
    HistoryFixtures.record(env, workflowId, execution.getRunId(), "plan-k0s-next-build.json");
  }

  static Stream<java.nio.file.Path> histories() throws Exception {
    return HistoryFixtures.withPrefix("plan-").stream();
  }

  @org.junit.jupiter.params.ParameterizedTest
  @org.junit.jupiter.params.provider.MethodSource("histories")
  void replaysCommittedPlanHistories(java.nio.file.Path history) throws Exception {
    HistoryFixtures.replay(history, PlanWorkflowImpl.class);
  }
}
