package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.HandedOverNode;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.util.List;
import org.junit.jupiter.api.Test;

class NodeEndReportsTest {
  private static final String CHILD = "node-upgrade/fleet/edge-1-worker-a-1/v1.31.2+k3s1";

  private static NodeEnd upgraded(String runId) {
    return new NodeEnd("worker-a-1", CHILD, runId,
        new NodeUpgradeResult("edge-1-worker-a-1", "worker-a-1", "v1.30.4+k3s1", "v1.31.2+k3s1", false, List.of()),
        null, null, null);
  }

  private static NodeEnd stoodDown(String runId) {
    return new NodeEnd("worker-a-1", CHILD, runId, null, UpgradeFailures.CANCELLED, "stood down before its turn", null);
  }

  @Test
  void aReportThatComesBeforeTheRunHasLoadedItsNodesIsKeptForTheRunItCameFrom() {
    NodeEndReports reports = new NodeEndReports();

    reports.accept(upgraded("run-2"));

    assertTrue(reports.has("run-2"));
    assertEquals(upgraded("run-2"), reports.take("run-2"));
    assertFalse(reports.has("run-2"), "taken once");
  }

  @Test
  void theStandDownReportOfAnEarlierRunOfTheSameChildIsNeverTakenForTheRunFollowed() {
    NodeEndReports reports = new NodeEndReports();
    reports.accept(stoodDown("run-1"));

    assertNull(reports.take("run-2"));
    reports.accept(upgraded("run-2"));
    assertTrue(reports.take("run-2").upgraded());
  }

  @Test
  void onlyTheReportsOfTheRunsHandedOverAreCarriedAndARecordedNodeForgetsItsReports() {
    NodeEndReports reports = new NodeEndReports();
    reports.accept(stoodDown("run-1"));
    reports.accept(upgraded("run-2"));
    reports.accept(new NodeEnd(null, CHILD, "run-3", null, "X", "no node", null));
    reports.accept(new NodeEnd("worker-a-1", CHILD, null, null, "X", "no run", null));

    assertEquals(List.of(upgraded("run-2")), reports.of(List.of(new HandedOverNode("worker-a-1", CHILD, "run-2"))));
    reports.forget("worker-a-1");
    assertFalse(reports.has("run-1"));
    assertFalse(reports.has("run-2"));
  }
}
