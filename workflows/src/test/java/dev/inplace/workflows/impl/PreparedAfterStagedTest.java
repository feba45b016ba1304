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

import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.FailurePolicy;
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
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerOptions;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Parents that prepare ahead prepare only once the nodes that started with their turn have staged
 * (parent-prepares-after-staged): at a run's start the window's first nodes stage alone, then the
 * next nodes are prepared while the first ones are upgraded, at most half the look-ahead staging at
 * once (parent-paces-preparation). Sticky execution is off, so every
 * workflow task replays its run's whole history.
 */
class PreparedAfterStagedTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow = ParentFixtures.extension()
      .setWorkerOptions(WorkerOptions.newBuilder().setStickyQueueScheduleToStartTimeout(Duration.ZERO).build())
      .build();

  private static final Duration STAGING = Duration.ofMinutes(2);

  private final ChildScript script = new ChildScript()
      .everyNodeStages(STAGING).everyNodePrepares(Duration.ofMinutes(1)).everyNodeTakes(Duration.ofMinutes(10));
  private final ParentEstate estate = new ParentEstate(script);

  private WorkersUpgradeResult upgradePool(WorkersUpgradeWorkflow run, String window) {
    return run.upgrade(new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), window, FailurePolicy.HALT, 0, 0, null, null));
  }

  /** Upgrades a pool of {@code size} with a window of {@code window}: every node, never more than the window at once. */
  private void upgradeAll(TestWorkflowEnvironment env, Worker worker, int size, int window) {
    poolOf(size);
    WorkersUpgradeWorkflow run = estate.start(env, worker, WorkersUpgradeWorkflow.class,
        WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO));
    assertEquals(size, upgradePool(run, String.valueOf(window)).upgraded());
    assertEquals(window, script.maxConcurrent(), "the window still bounds disruption");
  }

  private void poolOf(int size) {
    doAnswer(inv -> inventory(concat(controlPlanes(3, TO), workers(POOL, size, FROM))))
        .when(estate.capi).describeCluster(any());
  }

  @Test
  void theWindowsFirstNodesStageAloneThenTheNextArePreparedWhileTheyAreUpgraded(
      TestWorkflowEnvironment env, Worker worker) {
    upgradeAll(env, worker, 6, 2);

    long firstStaged = Math.max(script.stagedAt(POOL + "-1"), script.stagedAt(POOL + "-2"));
    assertTrue(script.stagedAt(POOL + "-1") > 0 && script.stagedAt(POOL + "-2") > 0, "both first nodes reported staging");
    // Nodes prepared in the same workflow task start their children in either order.
    assertEquals(List.of(POOL + "-3", POOL + "-4", POOL + "-5", POOL + "-6"),
        script.preparations().stream().sorted().toList());
    assertTrue(script.preparedAt(POOL + "-3") >= firstStaged,
        "prepared at " + script.preparedAt(POOL + "-3") + ", before the first nodes staged at " + firstStaged);
    assertTrue(script.preparedAt(POOL + "-3") < script.lastRun(POOL + "-1").finishedMillis(),
        "still prepared while the first nodes are upgraded");
  }

  @Test
  void aControlPlanePreparesItsSecondNodeOnceTheFirstHasStaged(TestWorkflowEnvironment env, Worker worker) {
    doAnswer(inv -> inventory(controlPlanes(3, FROM))).when(estate.capi).describeCluster(any());
    ControlPlaneUpgradeWorkflow run = estate.start(env, worker, ControlPlaneUpgradeWorkflow.class,
        WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO));

    assertEquals(3, run.upgrade(new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, ParentFixtures.template(), 0, null))
        .upgraded());

    assertEquals(1, script.maxConcurrent(), "control-plane nodes must never be upgraded together");
    assertEquals(List.of("cp-2", "cp-3"), script.preparations());
    assertTrue(script.stagedAt("cp-1") > 0, "cp-1 reported staging");
    assertTrue(script.preparedAt("cp-2") >= script.stagedAt("cp-1"),
        "cp-2 prepared at " + script.preparedAt("cp-2") + ", before cp-1 staged at " + script.stagedAt("cp-1"));
    assertTrue(script.stagedAt("cp-2") >= script.preparedAt("cp-2"),
        "a node prepared ahead reports staging too (parent-paces-preparation)");
    assertTrue(script.preparedAt("cp-3") >= script.stagedAt("cp-2"), "one control-plane node stages at a time");
  }

  @Test
  void aNodeThatFailsBeforeItHasStagedHoldsNoPreparationBack(TestWorkflowEnvironment env, Worker worker) {
    poolOf(4);
    script.failsBeforeItsTurn(POOL + "-1", UpgradeStep.PREFLIGHT, UpgradeFailures.INSUFFICIENT_DISK,
        Duration.ofSeconds(30));
    WorkersUpgradeWorkflow run = estate.start(env, worker, WorkersUpgradeWorkflow.class,
        WorkflowIds.workersUpgrade("fleet", "edge-1", POOL, TO));

    WorkersUpgradeResult result = run.upgrade(new WorkersUpgradeRequest(
        Fixtures.CLUSTER, POOL, ParentFixtures.template(), "1", FailurePolicy.CONTINUE, 1, 0, null, null));

    assertEquals(3, result.upgraded());
    assertEquals(1, result.failed());
    assertEquals(-1, script.stagedAt(POOL + "-1"), POOL + "-1 never staged");
    // Its end let the next node start with its turn, and that node's staging let the rest be prepared.
    assertTrue(script.stagedAt(POOL + "-2") > 0, POOL + "-2 started with its turn and staged");
    assertEquals(List.of(POOL + "-3", POOL + "-4"), script.preparations());
    assertTrue(script.preparedAt(POOL + "-3") >= script.stagedAt(POOL + "-2"));
  }

  /**
   * parent-paces-preparation: of a look-ahead of 4 (window 4), at most 2 nodes prepared ahead stage at
   * once; the next starts when one of them has said it is staged.
   */
  @Test
  void nodesPreparedAheadStageAtMostHalfTheLookAheadAtOnce(TestWorkflowEnvironment env, Worker worker) {
    upgradeAll(env, worker, 12, 4);

    List<String> prepared = script.preparations();
    assertEquals(8, prepared.size(), "every node after the first window was prepared ahead: " + prepared);
    int most = 0;
    for (String node : prepared) {
      long at = script.preparedAt(node);
      assertTrue(script.stagedAt(node) >= at, node + " reported staging");
      int staging = (int) prepared.stream()
          .filter(other -> script.preparedAt(other) <= at && at < script.stagedAt(other))
          .count();
      most = Math.max(most, staging);
    }
    assertEquals(2, most, "nodes prepared ahead staging at once");
  }

  // ---- replay fixtures of the new path (recorded with -Dhistories.update=true) ------------------

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPoolPreparedAfterStaged(TestWorkflowEnvironment env, Worker worker) {
    recordPoolRun(env, worker, "workers-upgrade-prepared-after-staged.json", 4, "2");
  }

  /** Records a healthy pool of {@code size} upgraded with {@code window}, under the fixture's own ID. */
  private void recordPoolRun(TestWorkflowEnvironment env, Worker worker, String file, int size, String window) {
    HistoryFixtures.assumeNotRecorded(file);
    poolOf(size);
    WorkersUpgradeWorkflow run = estate.startFixtureRun(env, worker, WorkersUpgradeWorkflow.class, file);
    assertEquals(size, upgradePool(run, window).upgraded());
    HistoryFixtures.recordUnderItsId(env, file);
  }

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordControlPlanePreparedAfterStaged(TestWorkflowEnvironment env, Worker worker) {
    estate.recordHealthyControlPlaneRun(env, worker, "cp-upgrade-prepared-after-staged.json");
  }

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordPoolPacedPreparation(TestWorkflowEnvironment env, Worker worker) {
    recordPoolRun(env, worker, "workers-upgrade-paced-preparation.json", 8, "3");
  }

  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordControlPlanePacedPreparation(TestWorkflowEnvironment env, Worker worker) {
    estate.recordHealthyControlPlaneRun(env, worker, "cp-upgrade-paced-preparation.json");
  }
}
