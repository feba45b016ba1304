package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.HandedOverNode;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The end reports a WorkersUpgrade run holds ({@link dev.inplace.workflows.api.WorkersUpgradeWorkflow#nodeEnded}),
 * by the reporting child's run ID, until its node's outcome is recorded. Kept as they come, even
 * before the run has loaded its nodes (a signal can be handled before the workflow method starts):
 * a report is used only by the thread that follows that very run of the child, so a stray or stale
 * one (a child stood down before its node started again under the same workflow ID) changes nothing.
 */
final class NodeEndReports {
  private final Map<String, NodeEnd> byRun = new LinkedHashMap<>();

  void accept(NodeEnd end) {
    if (end != null && end.node() != null && end.runId() != null) {
      byRun.put(end.runId(), end);
    }
  }

  boolean has(String childRunId) {
    return byRun.containsKey(childRunId);
  }

  /** That run's report, taken out; null when none came. */
  NodeEnd take(String childRunId) {
    return byRun.remove(childRunId);
  }

  /** The node's outcome is recorded: its reports are not needed any more. */
  void forget(String node) {
    byRun.values().removeIf(end -> end.node().equals(node));
  }

  /** The reports of the runs handed over, for the next run. */
  List<NodeEnd> of(List<HandedOverNode> handedOver) {
    List<NodeEnd> carried = new ArrayList<>();
    for (HandedOverNode h : handedOver) {
      if (byRun.containsKey(h.childRunId())) {
        carried.add(byRun.get(h.childRunId()));
      }
    }
    return carried;
  }

  /** The reports the previous run carried over. */
  void load(List<NodeEnd> carried) {
    if (carried != null) {
      carried.forEach(this::accept);
    }
  }
}
