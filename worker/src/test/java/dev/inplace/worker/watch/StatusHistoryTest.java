package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.inplace.worker.crd.RunHistoryEntry;
import dev.inplace.worker.crd.RunRecord;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** status.history: one entry per ended run, with its from/to versions and counts, the last 20 kept. */
class StatusHistoryTest {
  private static final long START = Instant.parse("2026-11-20T10:00:00Z").toEpochMilli();
  private static final long END = Instant.parse("2026-11-20T10:07:30Z").toEpochMilli();

  private static UpgradeProgress progress(List<NodeStatus> nodes) {
    return new UpgradeProgress("WorkersUpgrade", new ClusterRef("fleet", "edge-1"), "v1.31.2+k3s1", RunPhase.SUCCEEDED,
        "done", false, "1", 1, nodes.size(), 0, 0, 0, 0, null, nodes);
  }

  private static NodeStatus node(String name, NodePhase phase) {
    return new NodeStatus("m-" + name, name, NodeRole.WORKER, phase, null, START, END, null, null, "node-upgrade/" + name);
  }

  private static UpgradeStatus startedWith(String workflowId, String pool, String from) {
    return new UpgradeStatus().setWorkflowIds(List.of(workflowId))
        .setRuns(List.of(new RunRecord(workflowId, pool).setFromVersion(from)))
        .setStartTime("2026-11-20T10:00:01Z");
  }

  @Test
  void anEndedRunIsRecordedOnceWithItsFromVersionTimesAndCounts() {
    StatusBuilder build = new StatusBuilder(1, "2026-11-20T10:08:00Z", "v1.31.2+k3s1");
    RunObservation ended = new RunObservation("workers-upgrade/a", "md-a", RunObservation.State.COMPLETED,
        progress(List.of(node("w1", NodePhase.UPGRADED), node("w2", NodePhase.UPGRADED), node("w3", NodePhase.SKIPPED))),
        null, null, Map.of(), START, END);

    UpgradeStatus first = build.mirrored(startedWith("workers-upgrade/a", "md-a", "v1.30.6+k3s1"), List.of(ended), true, false);
    UpgradeStatus again = build.mirrored(first, List.of(ended), true, false);

    assertEquals(1, again.getHistory().size(), "a run is recorded once, however often it is mirrored");
    RunHistoryEntry e = again.getHistory().get(0);
    assertEquals("workers-upgrade/a", e.getWorkflowId());
    assertEquals("md-a", e.getMachineDeployment());
    assertEquals("v1.30.6+k3s1", e.getFromVersion());
    assertEquals("v1.31.2+k3s1", e.getToVersion());
    assertEquals("2026-11-20T10:00:00Z", e.getStarted());
    assertEquals("2026-11-20T10:07:30Z", e.getFinished());
    assertEquals("Succeeded", e.getResult());
    assertEquals(3, e.getTotal());
    assertEquals(2, e.getUpgraded());
    assertEquals(1, e.getSkipped());
    assertEquals(0, e.getFailed());
    assertEquals("v1.30.6+k3s1", again.getRuns().get(0).getFromVersion(), "the run keeps its from version");
  }

  @Test
  void aRunningRunIsNotInTheHistory() {
    StatusBuilder build = new StatusBuilder(1, "2026-11-20T10:08:00Z", "v1.31.2+k3s1");
    RunObservation running = new RunObservation("workers-upgrade/a", "md-a", RunObservation.State.RUNNING,
        progress(List.of(node("w1", NodePhase.UPGRADING))), null, null, Map.of(), START, 0);

    UpgradeStatus next = build.mirrored(startedWith("workers-upgrade/a", "md-a", "v1.30.6+k3s1"), List.of(running), true, false);

    assertNull(next.getHistory());
  }

  @Test
  void aRunTemporalLostIsRecordedFailedWithTheSpecVersion() {
    StatusBuilder build = new StatusBuilder(1, "2026-11-20T10:08:00Z", "v1.31.2+k3s1");
    RunObservation lost = new RunObservation("cp-upgrade/x", null, RunObservation.State.NOT_FOUND, null, null, null, Map.of(), 0, 0);

    UpgradeStatus next = build.mirrored(startedWith("cp-upgrade/x", null, "v1.30.6+k3s1"), List.of(lost), true, false);

    RunHistoryEntry e = next.getHistory().get(0);
    assertEquals("Failed", e.getResult());
    assertEquals(Reasons.RUN_NOT_FOUND, e.getReason());
    assertEquals("v1.31.2+k3s1", e.getToVersion());
    assertEquals("2026-11-20T10:00:01Z", e.getStarted(), "unknown to Temporal: the CR's start time");
    assertEquals("2026-11-20T10:08:00Z", e.getFinished(), "unknown to Temporal: when it was found ended");
  }

  @Test
  void theHistoryKeepsTheLastTwentyRunsOldestFirst() {
    List<RunHistoryEntry> history = new ArrayList<>();
    for (int i = 1; i <= 25; i++) {
      history = RunHistoryEntry.append(history, new RunHistoryEntry().setWorkflowId("run-" + i));
    }

    assertEquals(RunHistoryEntry.MAX, history.size());
    assertEquals(20, history.size());
    assertEquals("run-6", history.get(0).getWorkflowId());
    assertEquals("run-25", history.get(19).getWorkflowId());
    assertEquals(history, RunHistoryEntry.append(history, new RunHistoryEntry().setWorkflowId("run-25")),
        "an entry already there is not added again");
  }
}
