package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.concat;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;

import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarksRequest;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeResult;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentEstate;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.mockito.invocation.Invocation;

/**
 * Parent runs set and remove their Machines' skip-remediation marks in batches
 * (parent-batched-machine-marks): the marks asked together go in one activity, and each
 * Machine still gets exactly what a mark of its own would have given it.
 */
class BatchedMachineMarksTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  private final ChildScript script = new ChildScript().everyNodeTakes(Duration.ofMinutes(10));
  private final ParentEstate estate = new ParentEstate(script);

  private WorkersUpgradeResult upgradePool(WorkersUpgradeWorkflow run, String window, FailurePolicy policy, int maxFailures) {
    return run.upgrade(new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), window, policy, maxFailures, 0, null, null));
  }

  private WorkersUpgradeWorkflow poolRun(TestWorkflowEnvironment env, Worker worker, int size) {
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, size, FROM))))
        .when(estate.capi).describeCluster(any());
    return estate.start(env, worker, WorkersUpgradeWorkflow.class, WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO));
  }

  /** Every batch the run asked for, in order. */
  private List<MachineMarksRequest> batches() {
    return org.mockito.Mockito.mockingDetails(estate.capi).getInvocations().stream()
        .filter(i -> i.getMethod().getName().equals("markMachines"))
        .map(Invocation::getArguments)
        .map(args -> (MachineMarksRequest) args[0])
        .toList();
  }

  private static String machine(int i) {
    return "edge-1-" + POOL + "-" + i;
  }

  @Test
  void theWindowsMarksGoInOneLocalActivityAndEachMachineIsMarkedAndUnmarkedOnce(
      TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeWorkflow run = poolRun(env, worker, 6);

    assertEquals(6, upgradePool(run, "3", FailurePolicy.HALT, 0).upgraded());

    String owner = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
    for (int i = 1; i <= 6; i++) {
      verify(estate.capi).markMachineUpgrading(new MachineMarkRequest("fleet", machine(i), true, owner));
      verify(estate.capi).markMachineUpgrading(new MachineMarkRequest("fleet", machine(i), false, owner));
    }
    List<MachineMarksRequest> batches = batches();
    assertEquals(Set.of(machine(1), machine(2), machine(3)),
        batches.get(0).marks().stream().map(MachineMarkRequest::machineName).collect(Collectors.toSet()),
        "the window's first three nodes are marked in one activity: " + batches);
    assertTrue(batches.size() < 12, "12 marks in " + batches.size() + " activities: " + batches);
    assertEquals(12, batches.stream().mapToInt(b -> b.marks().size()).sum());
  }

  @Test
  void aMachineThatCannotBeMarkedFailsAloneAndTheRestOfItsBatchGoesOn(TestWorkflowEnvironment env, Worker worker) {
    org.mockito.Mockito.when(estate.capi.markMachineUpgrading(
            argThat(r -> r != null && r.upgrading() && r.machineName().equals(machine(2)))))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.MACHINE_NOT_FOUND, "Machine fleet/" + machine(2) + " not found"));
    WorkersUpgradeWorkflow run = poolRun(env, worker, 3);

    WorkersUpgradeResult result = upgradePool(run, "3", FailurePolicy.CONTINUE, 1);

    assertEquals(2, result.upgraded());
    assertEquals(1, result.failed());
    NodeStatus failed = result.nodes().stream().filter(n -> n.machine().equals(machine(2))).findFirst().orElseThrow();
    assertEquals(NodePhase.FAILED, failed.phase());
    assertEquals(UpgradeFailures.MACHINE_NOT_FOUND, failed.reason());
    assertTrue(failed.message().contains("could not mark Machine " + machine(2)), failed.message());
    assertFalse(script.starts().contains(POOL + "-2"), "its child never started: " + script.starts());
    assertEquals(Set.of(machine(1), machine(2), machine(3)),
        batches().get(0).marks().stream().map(MachineMarkRequest::machineName).collect(Collectors.toSet()),
        "the three marks were one batch");
  }

  @Test
  void aBatchThatFailsForAReasonWorthRetryingIsRetriedWholeAndEveryNodeGoesOn(
      TestWorkflowEnvironment env, Worker worker) {
    AtomicBoolean failedOnce = new AtomicBoolean();
    doAnswer(inv -> {
          MachineMarkRequest r = inv.getArgument(0);
          if (r.upgrading() && r.machineName().equals(machine(2)) && failedOnce.compareAndSet(false, true)) {
            throw UpgradeFailures.retryable(UpgradeFailures.KUBERNETES_API_ERROR, "the API server answered 503");
          }
          return new MachineMarkResult(true);
        })
        .when(estate.capi).markMachineUpgrading(any());
    WorkersUpgradeWorkflow run = poolRun(env, worker, 3);

    assertEquals(3, upgradePool(run, "3", FailurePolicy.HALT, 0).upgraded());

    String owner = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);
    // The first Machine was marked before the failure and again by the retry: a mark is idempotent.
    verify(estate.capi, times(2)).markMachineUpgrading(new MachineMarkRequest("fleet", machine(1), true, owner));
    IntStream.rangeClosed(1, 3).forEach(i ->
        verify(estate.capi).markMachineUpgrading(new MachineMarkRequest("fleet", machine(i), false, owner)));
  }

  // ---- replay fixtures of the new path (recorded with -Dhistories.update=true) ------------------

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPoolWithBatchedMarks(TestWorkflowEnvironment env, Worker worker) throws Exception {
    String file = "workers-upgrade-batched-machine-marks.json";
    HistoryFixtures.assumeNotRecorded(file);
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, 4, FROM))))
        .when(estate.capi).describeCluster(any());
    WorkersUpgradeWorkflow run = estate.startFixtureRun(env, worker, WorkersUpgradeWorkflow.class, file);
    assertEquals(4, upgradePool(run, "2", FailurePolicy.HALT, 0).upgraded());
    HistoryFixtures.recordUnderItsId(env, file);
  }

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordControlPlaneWithBatchedMarks(TestWorkflowEnvironment env, Worker worker) throws Exception {
    estate.recordHealthyControlPlaneRun(env, worker, "cp-upgrade-batched-machine-marks.json");
  }
}
