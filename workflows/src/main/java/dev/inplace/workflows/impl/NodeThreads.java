package dev.inplace.workflows.impl;

import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Which node threads of a parent run are alive, and the main thread's wake-up flag. Node threads
 * and control handlers set the flag; the node loop sleeps on it. Also carries a bug found in a node
 * thread to the main thread, which fails the workflow task with it so a fixed worker resumes.
 *
 * <p>In a run that prepares ahead, a running node either holds a turn (it may be disrupted: the
 * window counts these) or is prepared and waits for one; the node loop gives turns and stands
 * waiting nodes down.
 */
final class NodeThreads {
  /** Nodes whose thread runs (gate, mark, child, unmark), in start order. */
  private final Set<String> running = new LinkedHashSet<>();
  /** Nodes finished but whose Machine is still being unmarked: the run does not end before them. */
  private final Set<String> unmarking = new LinkedHashSet<>();
  /** Running nodes that hold a turn (a run that prepares ahead); the others wait for one. */
  private final Set<String> turns = new LinkedHashSet<>();
  /** Running nodes whose child has not yet said it is staged (see {@link #awaitStaged}): started with their turn or, in a run that paces preparation, prepared ahead. */
  private final Set<String> unstaged = new LinkedHashSet<>();
  /**
   * Running nodes whose thread only waits for its child, which holds its turn (a run that hands its
   * children over at continue-as-new): the next run can follow them.
   */
  private final Map<String, String> following = new LinkedHashMap<>();
  /** Waiting nodes the loop stands down, with why (paused, halted, aborted, skipped). */
  private final Map<String, String> standingDown = new LinkedHashMap<>();
  /**
   * Nodes whose outcome is recorded from their child's end report while the child still closes:
   * not in the window, but alive (see {@link #alive}).
   */
  private final Set<String> closing = new LinkedHashSet<>();
  private boolean changed;
  private RuntimeException unexpected;

  void started(String node) {
    running.add(node);
  }

  /** The node's child is done: its window slot is free while its Machine is unmarked. */
  void unmarking(String node) {
    running.remove(node);
    following.remove(node);
    turns.remove(node);
    unstaged.remove(node);
    standingDown.remove(node);
    unmarking.add(node);
    wake();
  }

  void unmarked(String node) {
    unmarking.remove(node);
    wake();
  }

  /** The node is done and unmarked, and its thread waits for its child to close. */
  void closing(String node) {
    closing.add(node);
  }

  /** The node's thread ended (whatever happened in it). */
  void ended(String node) {
    closing.remove(node);
    running.remove(node);
    following.remove(node);
    turns.remove(node);
    unstaged.remove(node);
    standingDown.remove(node);
    wake();
  }

  /** The node's child (that run of it) holds its turn, and the node's thread only waits for it to end. */
  void following(String node, String childRunId) {
    following.put(node, childRunId);
    wake();
  }

  /** The nodes whose threads only wait for their children, in start order, with their children's run IDs. */
  Map<String, String> followingNodes() {
    return new LinkedHashMap<>(following);
  }

  /**
   * Every node thread left only waits for its child (none marks, unmarks, waits for a turn or is
   * stood down): a run that hands its children over may continue as new now.
   */
  boolean onlyFollowing() {
    return unmarking.isEmpty() && following.keySet().containsAll(running);
  }

  /** Gives a waiting node its turn: from now on it counts in the window. */
  void giveTurn(String node) {
    turns.add(node);
    wake();
  }

  /**
   * The node's child will say when it is staged. One started with its turn: until then (or until its
   * thread ends) the loop prepares no node ahead, so the two uploads do not share the link. One
   * prepared ahead: until then it counts in {@link #stagingAhead}.
   */
  void awaitStaged(String node) {
    unstaged.add(node);
  }

  /** The node's child says it is staged; a node not waited for is ignored. */
  void staged(String node) {
    if (unstaged.remove(node)) {
      wake();
    }
  }

  /**
   * Whether a node with its turn has not staged yet. (Before parent-paces-preparation only such nodes
   * were waited for; since, nodes prepared ahead are too, and {@link #stagingAhead} counts them.)
   */
  boolean anyUnstaged() {
    return unstaged.stream().anyMatch(turns::contains);
  }

  /** How many nodes prepared ahead, without their turn, have not said they are staged. */
  int stagingAhead() {
    return (int) unstaged.stream().filter(node -> !turns.contains(node)).count();
  }

  boolean hasTurn(String node) {
    return turns.contains(node);
  }

  /** Running nodes that hold a turn. */
  int turnsTaken() {
    return turns.size();
  }

  /** Running nodes without a turn that are not being stood down, in start order. */
  List<String> waitingNodes() {
    return running.stream().filter(n -> !turns.contains(n) && !standingDown.containsKey(n)).toList();
  }

  /** Asks a waiting node's thread to stand its child down (nothing changed yet); {@code why} is recorded. */
  void standDown(String node, String why) {
    standingDown.put(node, why);
    wake();
  }

  /** Why the node is being stood down, or null. */
  String standingDown(String node) {
    return standingDown.get(node);
  }

  void failed(RuntimeException bug) {
    unexpected = bug;
  }

  /** Throws a bug a node thread met, if any. */
  void rethrowBug() {
    if (unexpected != null) {
      throw unexpected;
    }
  }

  /**
   * Whether the node still has a thread (running, unmarking, or waiting for its child to close): a
   * node stood down and put back in the queue must not start again before its old thread has ended,
   * or the two threads' ends would be counted as one.
   */
  boolean alive(String node) {
    return running.contains(node) || unmarking.contains(node) || closing.contains(node);
  }

  int running() {
    return running.size();
  }

  /** The running nodes in start order (for log lines). */
  List<String> runningNodes() {
    return List.copyOf(running);
  }

  boolean noneRunning() {
    return running.isEmpty();
  }

  boolean noneUnmarking() {
    return unmarking.isEmpty();
  }

  /** No node thread is left: nothing runs and no Machine is being unmarked. */
  boolean settled() {
    return running.isEmpty() && unmarking.isEmpty();
  }

  void wake() {
    changed = true;
  }

  void clearWake() {
    changed = false;
  }

  boolean woken() {
    return changed;
  }
}
