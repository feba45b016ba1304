package dev.inplace.workflows.testing;

import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.UpgradeStep;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * What the fake NodeUpgrade children of one test do, node by node, and what they did. The test owns
 * the instance and the worker's factory hands it to every {@link FakeNodeUpgrade}, so nothing is
 * shared between tests. Thread-safe: children run on several workflow threads.
 */
public final class ChildScript {
  /** One child run: how long it takes (workflow time) and how it fails, if it does ({@code reason} null: it succeeds). */
  public record Outcome(long seconds, UpgradeStep failedStep, String reason, NodePhase phase) {}

  /** A child run as it happened, in workflow time. */
  public record Run(String node, long startedMillis, long finishedMillis, boolean upgraded) {}

  /** Told when each child starts and ends, so a test can verify the order against activity mocks. */
  public interface Listener {
    void started(String node);

    void finished(String node, boolean upgraded);
  }

  private final Map<String, Deque<Outcome>> scripted = new ConcurrentHashMap<>();
  private final Map<String, Deque<Outcome>> preparations = new ConcurrentHashMap<>();
  private final List<Run> prepared = Collections.synchronizedList(new ArrayList<>());
  private final List<String> stoodDown = Collections.synchronizedList(new ArrayList<>());
  private volatile long preparationSeconds;
  private volatile long stagingSeconds;
  private final Map<String, Long> stagedAt = new ConcurrentHashMap<>();
  private final Map<String, Long> seconds = new ConcurrentHashMap<>();
  private final Map<String, Long> runningSince = new ConcurrentHashMap<>();
  private final List<Run> runs = Collections.synchronizedList(new ArrayList<>());
  private final List<String> starts = Collections.synchronizedList(new ArrayList<>());
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicInteger maxRunning = new AtomicInteger();
  private volatile long defaultSeconds = 600;
  private volatile Duration lingerAfterReport = Duration.ZERO;
  private volatile Listener listener = new Listener() {
        @Override
        public void started(String node) {}

        @Override
        public void finished(String node, boolean upgraded) {}
      };

  public ChildScript listener(Listener listener) {
    this.listener = listener;
    return this;
  }

  /** How long every child takes unless told otherwise. */
  public ChildScript everyNodeTakes(Duration duration) {
    defaultSeconds = duration.toSeconds();
    return this;
  }

  public ChildScript takes(String node, Duration duration) {
    seconds.put(node, duration.toSeconds());
    return this;
  }

  /** The next run of {@code node} fails after {@code after} like the real saga does at {@code step}. */
  public ChildScript failsOnce(String node, UpgradeStep step, String reason, NodePhase phase, Duration after) {
    scripted.computeIfAbsent(node, n -> new ArrayDeque<>()).addLast(new Outcome(after.toSeconds(), step, reason, phase));
    return this;
  }

  /**
   * How long every child asked to report its end stays open after its report (default 0): the
   * report's signal and the child's last workflow task, stretched so a parent's use of each shows.
   */
  public ChildScript lingersAfterReport(Duration duration) {
    lingerAfterReport = duration;
    return this;
  }

  public Duration lingerAfterReport() {
    return lingerAfterReport;
  }

  /** How long every child asked to report staging stages before it tells its parent (default 0). */
  public ChildScript everyNodeStages(Duration duration) {
    stagingSeconds = duration.toSeconds();
    return this;
  }

  /** How long every child asked to wait for a permit prepares before it waits (default 0). */
  public ChildScript everyNodePrepares(Duration duration) {
    preparationSeconds = duration.toSeconds();
    return this;
  }

  /**
   * The next run of {@code node} that prepares fails at {@code step} before its turn, changing
   * nothing; a run started with its turn that reports staging fails so before it has staged.
   */
  public ChildScript failsBeforeItsTurn(String node, UpgradeStep step, String reason, Duration after) {
    preparations.computeIfAbsent(node, n -> new ArrayDeque<>())
        .addLast(new Outcome(after.toSeconds(), step, reason, NodePhase.FAILED));
    return this;
  }

  /** Drops whatever is still scripted for {@code node}: its next run succeeds. */
  public void fix(String node) {
    scripted.remove(node);
    preparations.remove(node);
  }

  Outcome prepare(String node, long millis) {
    prepared.add(new Run(node, millis, 0, false));
    Deque<Outcome> queue = preparations.get(node);
    Outcome next = queue == null ? null : queue.pollFirst();
    return next != null ? next : new Outcome(preparationSeconds, null, null, null);
  }

  /** A child started with its turn stages: its scripted failure before its turn, if any, else its staging time. */
  Outcome stage(String node, long millis) {
    Deque<Outcome> queue = preparations.get(node);
    Outcome failure = queue == null ? null : queue.pollFirst();
    if (failure != null) {
      return failure;
    }
    stagedAt.put(node, millis + stagingSeconds * 1000);
    return new Outcome(stagingSeconds, null, null, null);
  }

  /** A child prepared ahead and asked to report staging told its parent it had staged. */
  void preparedAndStaged(String node, long millis) {
    stagedAt.put(node, millis);
  }

  /** When (workflow time) the child of {@code node} last told its parent it had staged, or -1. */
  public long stagedAt(String node) {
    return stagedAt.getOrDefault(node, -1L);
  }

  void stoodDown(String node) {
    stoodDown.add(node);
  }

  /** Nodes in the order their children started preparing (only children asked to wait for a permit). */
  public List<String> preparations() {
    synchronized (prepared) {
      return prepared.stream().map(Run::node).toList();
    }
  }

  /** When (workflow time) the child of {@code node} last started preparing, or -1. */
  public long preparedAt(String node) {
    synchronized (prepared) {
      return prepared.stream().filter(r -> r.node().equals(node)).mapToLong(Run::startedMillis).reduce((a, b) -> b).orElse(-1);
    }
  }

  /** When (workflow time) the last run of {@code node} started and finished its upgrade, or null. */
  public Run lastRun(String node) {
    return runs().stream().filter(r -> r.node().equals(node)).reduce((a, b) -> b).orElse(null);
  }

  /** Nodes whose children were stood down before their turn, in order. */
  public List<String> stoodDown() {
    synchronized (stoodDown) {
      return List.copyOf(stoodDown);
    }
  }

  Outcome begin(String node) {
    int now = running.incrementAndGet();
    maxRunning.accumulateAndGet(now, Math::max);
    starts.add(node);
    listener.started(node);
    Deque<Outcome> queue = scripted.get(node);
    Outcome next = queue == null ? null : queue.pollFirst();
    return next != null ? next : new Outcome(seconds.getOrDefault(node, defaultSeconds), null, null, null);
  }

  void started(String node, long millis) {
    runningSince.put(node, millis);
  }

  void end(String node, long millis, boolean upgraded) {
    running.decrementAndGet();
    runs.add(new Run(node, runningSince.getOrDefault(node, 0L), millis, upgraded));
    listener.finished(node, upgraded);
  }

  /** The most children that ever ran at the same time. */
  public int maxConcurrent() {
    return maxRunning.get();
  }

  /** Nodes in the order their children started (a retried node appears again). */
  public List<String> starts() {
    synchronized (starts) {
      return List.copyOf(starts);
    }
  }

  /** Finished runs in the order they finished. */
  public List<Run> runs() {
    synchronized (runs) {
      return List.copyOf(runs);
    }
  }

  public long upgradesOf(String node) {
    return runs().stream().filter(r -> r.node().equals(node) && r.upgraded()).count();
  }
}
