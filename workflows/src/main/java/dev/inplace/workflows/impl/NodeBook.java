package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeStep;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The ledger of a parent run (ControlPlaneUpgrade, WorkersUpgrade): every node's status, the queue
 * of nodes still to start, and the rules of the operator's controls over them. Plain Java with the
 * time passed in, so the rules are testable on their own and the workflow stays deterministic:
 * nodes are kept in machine order (insertion-ordered map, a deque for the queue), never in an order
 * that a hash decides.
 *
 * <p>Each control has a {@code check*} method (throws {@link IllegalArgumentException} or {@link
 * IllegalStateException} with the reason, used by the Update validators so a refused update leaves
 * no history) and a method that applies it and returns a short message.
 */
final class NodeBook {
  private final List<MachineInfo> machines = new ArrayList<>();
  private final Map<String, NodeStatus> statuses = new LinkedHashMap<>();
  private final Deque<String> queue = new ArrayDeque<>();
  private boolean paused;
  private boolean aborting;
  private boolean finished;
  private long lastFinishedMillis;

  /**
   * Takes the run's nodes, in the order they are to be upgraded. {@code carried} holds the statuses
   * of an earlier run of the same logical upgrade (continue-as-new), or is empty; {@code handedOver}
   * names its nodes still in flight whose children this run follows (they stay as they were).
   */
  void load(List<MachineInfo> nodes, List<NodeStatus> carried, Set<String> handedOver) {
    Map<String, NodeStatus> before = new LinkedHashMap<>();
    for (NodeStatus s : carried) {
      before.put(s.node(), s);
    }
    for (MachineInfo m : nodes) {
      if (statuses.containsKey(m.nodeName())) {
        throw new IllegalArgumentException("node " + m.nodeName() + " belongs to two Machines");
      }
      machines.add(m);
      NodeStatus status = before.get(m.nodeName());
      if (status == null || isInFlight(status.phase()) && !handedOver.contains(m.nodeName())) {
        // In flight and not handed over: from a run that drained its window first; start it again.
        status = new NodeStatus(m.name(), m.nodeName(), m.role(), NodePhase.PENDING, null, 0, 0, null, "", null);
      }
      statuses.put(m.nodeName(), status);
      if (status.phase() == NodePhase.PENDING) {
        queue.addLast(m.nodeName());
      }
      if (status.workflowId() != null && status.finishedMillis() > lastFinishedMillis) {
        lastFinishedMillis = status.finishedMillis();
      }
    }
  }

  List<MachineInfo> machines() {
    return List.copyOf(machines);
  }

  List<NodeStatus> statuses() {
    return List.copyOf(statuses.values());
  }

  MachineInfo machine(String node) {
    for (MachineInfo m : machines) {
      if (m.nodeName().equals(node)) {
        return m;
      }
    }
    throw new IllegalArgumentException("unknown node " + node);
  }

  NodeStatus status(String node) {
    return statuses.get(node);
  }

  // ---- progress of nodes ------------------------------------------------------------------------

  /** A node that already runs the target when the run starts: nothing to do, counted as upgraded. */
  void alreadyAtTarget(String node, String version) {
    NodeStatus s = statuses.get(node);
    queue.remove(node);
    statuses.put(node, with(s, NodePhase.UPGRADED, null, 0, 0, null, "already at " + version, null));
  }

  Optional<String> nextPending() {
    return Optional.ofNullable(queue.peekFirst());
  }

  /** Takes the next node off the queue and marks it upgrading under the child's workflow ID. */
  MachineInfo start(long now, String workflowId) {
    String node = queue.removeFirst();
    NodeStatus s = statuses.get(node);
    statuses.put(node, with(s, NodePhase.UPGRADING, null, now, 0, null, "starting", workflowId));
    return machine(node);
  }

  /**
   * Takes the next node off the queue to prepare it ahead of its turn (a run that prepares ahead):
   * it stays PENDING, with the child's workflow ID, until {@link #takeTurn}.
   */
  MachineInfo prepare(String workflowId) {
    String node = queue.removeFirst();
    NodeStatus s = statuses.get(node);
    statuses.put(node, with(s, NodePhase.PENDING, null, 0, 0, null, "preparing ahead of its turn", workflowId));
    return machine(node);
  }

  /** A prepared node takes its turn: it is upgrading from now on (its start time is its turn's). */
  void takeTurn(String node, long now) {
    NodeStatus s = statuses.get(node);
    statuses.put(node, with(s, NodePhase.UPGRADING, null, now, 0, null, "its turn: upgrading", s.workflowId()));
  }

  /**
   * A prepared node stood down before its turn, nothing changed on it: back to the front of the
   * queue, in the order given, unless the operator skipped it meanwhile (then it stays skipped).
   */
  void requeue(String node, String why) {
    NodeStatus s = statuses.get(node);
    if (s.phase() != NodePhase.PENDING || queue.contains(node)) {
      return;
    }
    // Nodes stood down together go back in their machine order, ahead of the rest.
    List<String> order = new ArrayList<>(queue);
    int at = 0;
    while (at < order.size() && statuses.get(order.get(at)).message().startsWith(STOOD_DOWN)
        && indexOf(order.get(at)) < indexOf(node)) {
      at++;
    }
    order.add(at, node);
    queue.clear();
    queue.addAll(order);
    statuses.put(node, with(s, NodePhase.PENDING, null, 0, 0, null,
        STOOD_DOWN + " (" + why + "); nothing was changed on the node", null));
  }

  private static final String STOOD_DOWN = "stood down before its turn";

  private int indexOf(String node) {
    for (int i = 0; i < machines.size(); i++) {
      if (machines.get(i).nodeName().equals(node)) {
        return i;
      }
    }
    return -1;
  }

  void note(String node, String message) {
    NodeStatus s = statuses.get(node);
    statuses.put(node, with(s, s.phase(), s.step(), s.startedMillis(), s.finishedMillis(), s.reason(), message, s.workflowId()));
  }

  void upgraded(String node, long now, String message) {
    NodeStatus s = statuses.get(node);
    statuses.put(node, with(s, NodePhase.UPGRADED, null, s.startedMillis(), now, null, message, s.workflowId()));
    lastFinishedMillis = now;
  }

  void failed(String node, long now, NodePhase phase, UpgradeStep step, String reason, String message) {
    NodeStatus s = statuses.get(node);
    statuses.put(node, with(s, phase, step, s.startedMillis(), now, reason, message, s.workflowId()));
    lastFinishedMillis = now;
  }

  /** Appends a warning to a node's message without changing its outcome. */
  void warn(String node, String warning) {
    NodeStatus s = statuses.get(node);
    note(node, s.message() == null || s.message().isEmpty() ? warning : s.message() + "; " + warning);
  }

  long lastFinishedMillis() {
    return lastFinishedMillis;
  }

  // ---- counts -----------------------------------------------------------------------------------

  int total() {
    return statuses.size();
  }

  int upgraded() {
    return count(NodePhase.UPGRADED);
  }

  int skipped() {
    return count(NodePhase.SKIPPED);
  }

  int failed() {
    return (int) statuses.values().stream().filter(s -> isFailed(s.phase())).count();
  }

  /** Nodes not started or, in a run that prepares ahead, prepared but without a turn yet. */
  int pending() {
    return count(NodePhase.PENDING);
  }

  List<String> inFlight() {
    return statuses.values().stream().filter(s -> isInFlight(s.phase())).map(NodeStatus::node).toList();
  }

  /** The failed nodes, in machine order. */
  List<NodeStatus> failures() {
    return statuses.values().stream().filter(s -> isFailed(s.phase())).toList();
  }

  /** Whether failures stop new nodes from starting: any failure under HALT, more than allowed under CONTINUE. */
  boolean halted(FailurePolicy policy, int maxFailures) {
    int failed = failed();
    return policy == FailurePolicy.CONTINUE ? failed > maxFailures : failed > 0;
  }

  /**
   * Whether the node loop is over: nothing in flight, and either aborting or every node resolved
   * (upgraded, skipped, or failed within what the policy tolerates).
   */
  boolean done(FailurePolicy policy, int maxFailures) {
    if (!inFlight().isEmpty()) {
      return false;
    }
    return aborting || (queue.isEmpty() && !halted(policy, maxFailures));
  }

  boolean allUpgraded() {
    return upgraded() == total();
  }

  // ---- operator controls ------------------------------------------------------------------------

  boolean paused() {
    return paused;
  }

  boolean aborting() {
    return aborting;
  }

  boolean finished() {
    return finished;
  }

  /** No control is accepted any more: the run is recording its result or has ended. */
  void finish() {
    finished = true;
  }

  void restoreControls(boolean paused, boolean aborting) {
    this.paused = paused;
    this.aborting = aborting;
  }

  void checkPause() {
    checkRunning();
    if (paused) {
      throw new IllegalStateException("already paused; use resume to continue");
    }
  }

  String pause() {
    paused = true;
    List<String> inFlight = inFlight();
    return "paused: no new node starts"
        + (inFlight.isEmpty() ? "" : "; in flight and finishing: " + String.join(", ", inFlight));
  }

  void checkResume() {
    checkRunning();
    if (!paused) {
      throw new IllegalStateException("not paused");
    }
  }

  String resume() {
    paused = false;
    return "resumed: " + queue.size() + " node(s) still to start";
  }

  void checkAbort() {
    if (finished) {
      throw new IllegalStateException("the run has already finished");
    }
    if (aborting) {
      throw new IllegalStateException("already aborting");
    }
  }

  String abort() {
    aborting = true;
    List<String> inFlight = inFlight();
    return "aborting: " + queue.size() + " node(s) will not start"
        + (inFlight.isEmpty() ? "" : "; waiting for " + String.join(", ", inFlight) + " to finish");
  }

  void checkRetry(String node) {
    checkRunning();
    NodeStatus s = require(node);
    if (!isFailed(s.phase())) {
      throw new IllegalStateException(
          "node " + s.node() + " is " + s.phase() + "; only a FAILED, ROLLED_BACK or ROLLBACK_FAILED node can be retried");
    }
  }

  String retry(String node) {
    NodeStatus s = require(node);
    String before = s.reason() == null ? s.phase().name() : s.reason();
    statuses.put(s.node(), with(s, NodePhase.PENDING, null, 0, 0, null, "retry requested after " + before, null));
    queue.addFirst(s.node());
    return "node " + s.node() + " queued for retry (next to start)";
  }

  void checkSkip(String node) {
    checkRunning();
    NodeStatus s = require(node);
    switch (s.phase()) {
      case UPGRADED -> throw new IllegalStateException("node " + s.node() + " is already upgraded");
      case UPGRADING, ROLLING_BACK ->
          throw new IllegalStateException("node " + s.node() + " is in flight; wait for it to finish");
      case SKIPPED -> throw new IllegalStateException("node " + s.node() + " is already skipped");
      default -> {
        // PENDING or failed: may be skipped.
      }
    }
  }

  String skip(String node) {
    NodeStatus s = require(node);
    queue.remove(s.node());
    String why = isFailed(s.phase()) ? "skipped by the operator after: " + s.message() : "skipped by the operator";
    statuses.put(s.node(), with(s, NodePhase.SKIPPED, s.step(), s.startedMillis(), s.finishedMillis(), s.reason(), why, s.workflowId()));
    return "node " + s.node() + " skipped: it stays on its current version";
  }

  /** Refuses any control once the run is aborting or finished. */
  void checkRunning() {
    if (finished) {
      throw new IllegalStateException("the run has already finished");
    }
    if (aborting) {
      throw new IllegalStateException("the run is aborting");
    }
  }

  /** Finds a node by node name or, for convenience, by Machine name. */
  private NodeStatus require(String node) {
    if (node == null || node.isBlank()) {
      throw new IllegalArgumentException("a node name is required");
    }
    NodeStatus s = statuses.get(node);
    if (s != null) {
      return s;
    }
    for (NodeStatus candidate : statuses.values()) {
      if (candidate.machine().equals(node)) {
        return candidate;
      }
    }
    List<String> known = statuses.keySet().stream().limit(10).toList();
    throw new IllegalArgumentException(
        "unknown node '" + node + "'; this run's nodes: " + String.join(", ", known)
            + (statuses.size() > known.size() ? ", ..." : ""));
  }

  private int count(NodePhase phase) {
    return (int) statuses.values().stream().filter(s -> s.phase() == phase).count();
  }

  static boolean isFailed(NodePhase phase) {
    return phase == NodePhase.FAILED || phase == NodePhase.ROLLED_BACK || phase == NodePhase.ROLLBACK_FAILED;
  }

  static boolean isInFlight(NodePhase phase) {
    return phase == NodePhase.UPGRADING || phase == NodePhase.ROLLING_BACK;
  }

  private static NodeStatus with(
      NodeStatus s,
      NodePhase phase,
      UpgradeStep step,
      long started,
      long finished,
      String reason,
      String message,
      String workflowId) {
    return new NodeStatus(s.machine(), s.node(), s.role(), phase, step, started, finished, reason, message, workflowId);
  }
}
