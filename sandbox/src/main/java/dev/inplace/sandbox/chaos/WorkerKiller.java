package dev.inplace.sandbox.chaos;

import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.sandbox.stack.StackLayout;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Kills the stack's worker processes with SIGKILL at seeded random instants and starts them again:
 * at once, after a delay, or all of them down together for a while. More than half of the kills are
 * aimed: the killer waits for an activity the server reports started on a live worker and kills that
 * worker, then asks the server whether that attempt was still open (a dead worker cannot close it),
 * which makes the kill one that landed mid-activity.
 */
final class WorkerKiller implements Runnable {
  /** How a killed worker comes back. */
  enum Restart { AT_ONCE, DELAYED, ALL_DOWN }

  /**
   * One SIGKILL.
   *
   * @param activity the activity attempt it aimed at, if any
   * @param midActivity whether the server still had that attempt open on the killed worker after the kill
   */
  record Kill(int worker, long pid, long atMillis, Restart restart, ActivityWatch.InFlight activity, boolean midActivity) {}

  private final LocalStack stack;
  private final ActivityWatch watch;
  private final Random random;
  private final int target;
  private final Consumer<String> say;
  private final List<Kill> kills = new CopyOnWriteArrayList<>();
  private final Set<Integer> awaitingRestart = new HashSet<>();
  private final java.util.Map<String, Integer> aimedAt = new java.util.concurrent.ConcurrentHashMap<>();
  private final ScheduledExecutorService restarts = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "chaos-restarts");
    t.setDaemon(true);
    return t;
  });
  private final Object lock = new Object();
  private volatile boolean stopped;

  WorkerKiller(LocalStack stack, ActivityWatch watch, long seed, int target, Consumer<String> say) {
    this.stack = stack;
    this.watch = watch;
    this.random = new Random(seed);
    this.target = target;
    this.say = say;
  }

  List<Kill> kills() {
    return List.copyOf(kills);
  }

  /** Stops killing; workers waiting for a delayed restart are started now. */
  void stop() {
    stopped = true;
    restarts.shutdownNow();
    synchronized (lock) {
      for (int worker : new ArrayList<>(awaitingRestart)) {
        start(worker);
      }
    }
  }

  @Override
  public void run() {
    try {
      while (!stopped && kills.size() < target) {
        sleep(500 + random.nextInt(2500));
        if (stopped) {
          return;
        }
        double dice = random.nextDouble();
        Restart restart = stack.workers() > 1 && dice < 0.15 ? Restart.ALL_DOWN
            : dice < 0.6 ? Restart.AT_ONCE : Restart.DELAYED;
        boolean aim = random.nextDouble() < 0.8;
        boolean mustAim = midActivityShort();
        if (mustAim) {
          // The kills left are barely enough for a third to land mid-activity: each one is aimed, and
          // none is an all-down (its extra kills are not aimed).
          aim = true;
          if (restart == Restart.ALL_DOWN) {
            restart = Restart.AT_ONCE;
          }
        }
        // Most kills wait for the restarted workers to poll again, so they hit work, not a booting JVM.
        if (mustAim || random.nextDouble() < 0.85) {
          awaitLiveWorkersReady();
        }
        Optional<ActivityWatch.InFlight> aimed = aim ? awaitActivity(mustAim ? 60_000 : 20_000) : Optional.empty();
        if (stopped) {
          return;
        }
        if (mustAim && aimed.isEmpty()) {
          continue; // nothing in flight for a minute: look again rather than spend a kill on idle workers
        }
        int worker = aimed.map(a -> workerOf(a.workerPid())).orElseGet(this::anyLive);
        if (worker < 0) {
          continue; // every worker is down, waiting for its restart
        }
        if (restart == Restart.ALL_DOWN) {
          allDown(worker, aimed.orElse(null));
        } else {
          kill(worker, restart, aimed.orElse(null));
          if (restart == Restart.AT_ONCE) {
            synchronized (lock) {
              start(worker);
            }
          } else {
            long delay = 1_000 + random.nextInt(9_000);
            restarts.schedule(() -> {
              synchronized (lock) {
                if (awaitingRestart.contains(worker)) {
                  start(worker);
                }
              }
            }, delay, TimeUnit.MILLISECONDS);
          }
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Whether the kills still to come are at most one more than those needed for a third of all the
   * kills to land mid-activity (the campaign's rule, docs/reliability.md): from then on every kill is
   * aimed, so an unlucky schedule cannot miss the rule by chance.
   */
  private boolean midActivityShort() {
    long mid = kills.stream().filter(Kill::midActivity).count();
    long needed = (target + 2) / 3 - mid;
    long remaining = target - kills.size();
    return needed > 0 && needed >= remaining - 1;
  }

  /** Kills every live worker (the aimed one first), leaves them all down a few seconds, starts them. */
  private void allDown(int first, ActivityWatch.InFlight aimed) throws InterruptedException {
    List<Integer> killed = new ArrayList<>();
    kill(first, Restart.ALL_DOWN, aimed);
    killed.add(first);
    for (int i = 1; i <= stack.workers() && kills.size() < target; i++) {
      if (i != first && live(i)) {
        kill(i, Restart.ALL_DOWN, null);
        killed.add(i);
      }
    }
    long down = 2_000 + random.nextInt(6_000);
    say.accept("all workers down for " + down / 1000.0 + " s");
    sleep(down);
    synchronized (lock) {
      for (int i : killed) {
        if (awaitingRestart.contains(i)) {
          start(i);
        }
      }
    }
  }

  private void kill(int worker, Restart restart, ActivityWatch.InFlight aimed) {
    long pid;
    synchronized (lock) {
      Optional<Long> current = stack.pid(StackLayout.worker(worker));
      if (current.isEmpty()) {
        return;
      }
      pid = current.get();
      stack.killWorker(worker);
      awaitingRestart.add(worker);
    }
    long at = System.currentTimeMillis();
    // The attempt still open on the dead worker after the kill: it was in flight when the kill landed.
    ActivityWatch.InFlight hit = aimed != null && aimed.workerPid() == pid && watch.stillStarted(aimed) ? aimed : null;
    if (hit == null) {
      hit = watch.started().stream().filter(a -> a.workerPid() == pid).findFirst().orElse(null);
    }
    if (hit != null) {
      aimedAt.merge(hit.workflowId() + "/" + hit.activity(), 1, Integer::sum);
    }
    Kill kill = new Kill(worker, pid, at, restart, hit, hit != null);
    kills.add(kill);
    say.accept(String.format("kill %d/%d: SIGKILL %s (pid %d)%s, restart %s", kills.size(), target,
        StackLayout.worker(worker), pid,
        hit == null ? "" : " mid " + hit.activity() + " of " + hit.workflowId() + " attempt " + hit.attempt(),
        restart.name().toLowerCase().replace('_', ' ')));
  }

  /** Starts a killed worker again (the caller holds the lock). */
  private void start(int worker) {
    awaitingRestart.remove(worker);
    if (stack.pid(StackLayout.worker(worker)).isEmpty()) {
      stack.startWorker(worker);
    }
  }

  /** Waits until every live worker polls its task queue (a worker that dies meanwhile is skipped). */
  private void awaitLiveWorkersReady() {
    for (int i = 1; i <= stack.workers() && !stopped; i++) {
      if (live(i)) {
        try {
          stack.awaitWorker(i);
        } catch (LocalStack.StackException e) {
          say.accept(StackLayout.worker(i) + " not ready: " + e.getMessage().lines().findFirst().orElse(""));
        }
      }
    }
  }

  private Optional<ActivityWatch.InFlight> awaitActivity(long millis) throws InterruptedException {
    long deadline = System.currentTimeMillis() + millis;
    while (!stopped && System.currentTimeMillis() < deadline) {
      // At most two aimed kills per activity of a run: kills land at random instants, they do not
      // hunt one activity until its retry policy gives up (docs/reliability.md).
      List<ActivityWatch.InFlight> candidates = watch.started().stream()
          .filter(a -> workerOf(a.workerPid()) > 0)
          .filter(a -> aimedAt.getOrDefault(a.workflowId() + "/" + a.activity(), 0) < 2)
          .toList();
      if (!candidates.isEmpty()) {
        return Optional.of(candidates.get(random.nextInt(candidates.size())));
      }
      sleep(100);
    }
    return Optional.empty();
  }

  /** The index of the live worker with {@code pid}, or -1. */
  private int workerOf(long pid) {
    for (int i = 1; i <= stack.workers(); i++) {
      if (stack.pid(StackLayout.worker(i)).orElse(-1L) == pid) {
        return i;
      }
    }
    return -1;
  }

  private int anyLive() {
    List<Integer> live = new ArrayList<>();
    for (int i = 1; i <= stack.workers(); i++) {
      if (live(i)) {
        live.add(i);
      }
    }
    return live.isEmpty() ? -1 : live.get(random.nextInt(live.size()));
  }

  private boolean live(int worker) {
    synchronized (lock) {
      return !awaitingRestart.contains(worker) && stack.pid(StackLayout.worker(worker)).isPresent();
    }
  }

  private static void sleep(long millis) throws InterruptedException {
    Thread.sleep(millis);
  }
}
