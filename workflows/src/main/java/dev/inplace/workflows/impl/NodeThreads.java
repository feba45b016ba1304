package dev.inplace.workflows.impl;

import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Which node threads of a parent run are alive, and the main thread's wake-up flag. Node threads
 * and control handlers set the flag; the node loop sleeps on it. Also carries a bug found in a node
 * thread to the main thread, which fails the workflow task with it so a fixed worker resumes.
 */
final class NodeThreads {
  /** Nodes whose thread runs (gate, mark, child, unmark), in start order. */
  private final Set<String> running = new LinkedHashSet<>();
  /** Nodes finished but whose Machine is still being unmarked: the run does not end before them. */
  private final Set<String> unmarking = new LinkedHashSet<>();
  private boolean changed;
  private RuntimeException unexpected;

  void started(String node) {
    running.add(node);
  }

  /** The node's child is done: its window slot is free while its Machine is unmarked. */
  void unmarking(String node) {
    running.remove(node);
    unmarking.add(node);
    wake();
  }

  void unmarked(String node) {
    unmarking.remove(node);
    wake();
  }

  /** The node's thread ended (whatever happened in it). */
  void ended(String node) {
    running.remove(node);
    wake();
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
