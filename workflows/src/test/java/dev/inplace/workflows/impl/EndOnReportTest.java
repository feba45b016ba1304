package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.POOL;
import static dev.inplace.workflows.testing.ParentFixtures.concat;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static dev.inplace.workflows.testing.ParentFixtures.workers;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.Mockito.doAnswer;

import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.UpgradeStep;
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
import io.temporal.client.WorkflowOptions;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * A WorkersUpgrade run that hands its children over takes a node's outcome from its child's end
 * report when the report comes first (workers-end-on-report): the next node's turn does not wait
 * for the child's last workflow task. Here each child stays open an hour after its report, so a
 * parent that waited for the completions would start each next node an hour late.
 */
class EndOnReportTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension().build();

  private static final Duration LINGER = Duration.ofHours(1);
  static final String FIXTURE = "workers-upgrade-ended-on-report.json";

  private final ChildScript script =
      new ChildScript().everyNodeTakes(Duration.ofSeconds(10)).lingersAfterReport(LINGER);
  private final ParentEstate estate = new ParentEstate(script);
  private final String workflowId = WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO);

  private WorkersUpgradeResult upgradePool(TestWorkflowEnvironment env, Worker worker, int size, FailurePolicy policy,
      int maxFailures) {
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, size, FROM))))
        .when(estate.capi).describeCluster(any());
    estate.register(worker);
    env.start();
    WorkersUpgradeWorkflow run = env.getWorkflowClient().newWorkflowStub(WorkersUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
    return run.upgrade(new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), "1", policy, maxFailures, 0, null, null));
  }

  @Test
  void eachNextNodeTakesItsTurnOnThePreviousChildsReportWithoutWaitingForThatChildToClose(
      TestWorkflowEnvironment env, Worker worker) {
    WorkersUpgradeResult result = upgradePool(env, worker, 3, FailurePolicy.HALT, 0);

    assertEquals(3, result.upgraded(), result.nodes().toString());
    for (int i = 2; i <= 3; i++) {
      ChildScript.Run previous = script.lastRun(POOL + "-" + (i - 1));
      ChildScript.Run next = script.lastRun(POOL + "-" + i);
      long gap = next.startedMillis() - previous.finishedMillis();
      assertTrue(gap >= 0 && gap < LINGER.toMillis() / 2,
          POOL + "-" + i + " started " + gap + " ms after " + POOL + "-" + (i - 1) + " reported (its child stays open "
              + LINGER + ")");
    }
    assertEquals(1, script.maxConcurrent(), "the window of 1 holds");
    for (int i = 1; i <= 3; i++) {
      assertEquals(List.of(true, false), estate.marksOf("edge-1-" + POOL + "-" + i), "marked, then unmarked");
    }
  }

  @Test
  void aFailureReportedBeforeTheChildClosesIsRecordedWithTheChildsOwnFailure(
      TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce(POOL + "-1", UpgradeStep.VERIFY, UpgradeFailures.NODE_NOT_READY, NodePhase.ROLLED_BACK,
        Duration.ofSeconds(5));

    WorkersUpgradeResult result = upgradePool(env, worker, 2, FailurePolicy.CONTINUE, 1);

    assertEquals(1, result.upgraded());
    assertEquals(1, result.failed());
    ParentFixtures.assertInjectedVerifyFailure(result.nodes(), POOL + "-1");
    long gap = script.lastRun(POOL + "-2").startedMillis() - script.lastRun(POOL + "-1").finishedMillis();
    assertTrue(gap < LINGER.toMillis() / 2, "the next node did not wait for the failed child to close: " + gap + " ms");
  }

  // ---- replay fixture of the new path (recorded with -Dhistories.update=true) --------------------

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordEndedOnReport(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(FIXTURE);
    assertEquals(3, upgradePool(env, worker, 3, FailurePolicy.HALT, 0).upgraded());
    HistoryFixtures.record(env, workflowId, null, FIXTURE);
  }
}
