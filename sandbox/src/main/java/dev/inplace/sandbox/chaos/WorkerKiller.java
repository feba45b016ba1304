package dev.inplace.sandbox.chaos;

import dev.inplace.sandbox.stack.LocalStack;
import dev.inplace.sandbox.stack.StackLayout;
import java.util.ArrayList;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.stream.Collectors;

/**
 * Kills the stack's worker processes with SIGKILL at seeded random instants and starts them again:
 * at once, after a delay, or all of them down together for a while. More than half of the kills are
 * aimed: the killer waits for an activity the server reports started on a live worker, preferring a
 * kind the campaign has not hit yet ({@link KillAim}), and kills that worker; then it asks the server
 * which attempts are still open on the dead worker (a dead process cannot close them): those the kill
 * landed in. Kills kept for a failing node's compensation are spent by {@link CompensationKill}.
 */
final class WorkerKiller implements Runnable {
  /** How a killed worker comes back. */
  enum Restart { AT_ONCE, DELAYED, ALL_DOWN }

  /** Why the kill hit the worker it hit. */
  enum Aim {
    /** At a random instant, any live worker. */
    UNAIMED,
    /** At an activity of a named kind the campaign had not hit yet. */
    NEW_KIND,
    /** At whatever activity was in flight. */
    IN_FLIGHT,
    /** At an activity of a failing node's compensation. */
    COMPENSATION;

    String label() {
      return name().toLowerCase(java.util.Locale.ROOT).replace('_', '-');
    }
  }

  /**
   * One SIGKILL.
   *
   * @param atMillis epoch milliseconds just before the signal was sent
   * @param aimed the activity attempt it aimed at, if any
   * @param inFlight the attempts the server still had open on the killed worker after the kill
   */
  record Kill(int worker, long pid, long atMillis, Restart restart, Aim aim, ActivityWatch.InFlight aimed,
      List<ActivityWatch.InFlight> inFlight) {
    Kill {
      inFlight = List.copyOf(inFlight);
    }

    /** The server's word: an attempt was still open on the dead worker, so the kill landed mid-activity. */
    boolean midActivity() {
      return !inFlight.isEmpty();
    }

    /** The server's word: one of those attempts was part of a compensation. */
    boolean inCompensation() {
      return inFlight.stream().anyMatch(a -> a.kind() == KillKind.COMPENSATION);
    }
  }

  private final LocalStack stack;
  private final ActivityWatch watch;
  private final Random random;
  private final int target;
  /** Kills kept for {@link CompensationKill}s not yet spent or given up. */
  private final AtomicInteger reserved;
  /** The named kinds this campaign can reach (a compensation only with a failing node that has one). */
  private final Set<KillKind> reachable;
  private final Consumer<String> say;
  /** Whether the Temporal server is up: no worker is killed while it is down ({@link TemporalKiller}). */
  private final BooleanSupplier serverServing;
  private final List<Kill> kills = new CopyOnWriteArrayList<>();
  private final Set<Integer> awaitingRestart = new HashSet<>();
  private final java.util.Map<String, Integer> aimedAt = new java.util.concurrent.ConcurrentHashMap<>();
  private final ScheduledExecutorService restarts = Executors.newSingleThreadScheduledExecutor(r -> {
    Thread t = new Thread(r, "chaos-restarts");
    t.setDaemon(true);
    return t;
  });
  private final Object lock = new Object();
  /** Kills sent whose record is not written yet (the server is being asked what they hit). */
  private int pending;
  private volatile boolean stopped;

  /**
   * @param compensations kills to keep for the compensations of failing nodes (each spent by a
   *     {@link CompensationKill}, or given back with {@link #giveBack})
   */
  WorkerKiller(LocalStack stack, ActivityWatch watch, long seed, int target, int compensations, Consumer<String> say,
      BooleanSupplier serverServing) {
    this.stack = stack;
    this.watch = watch;
    this.random = new Random(seed);
    this.target = target;
    this.reserved = new AtomicInteger(Math.min(compensations, target));
    this.reachable = compensations > 0 ? Set.copyOf(KillKind.NAMED)
        : KillKind.NAMED.stream().filter(k -> k != KillKind.COMPENSATION).collect(Collectors.toUnmodifiableSet());
    this.say = say;
    this.serverServing = serverServing;
  }

  /** Kills kept for compensations, from the campaign's kills. */
  int reserved() {
    return reserved.get();
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
        if (kills.size() >= target - reserved.get()) {
          sleep(200); // the kills left are kept for a compensation; given back if it ends without one
          continue;
        }
        sleep(500 + random.nextInt(2500));
        while (!stopped && !serverServing.getAsBoolean()) {
          sleep(200); // the server is down (--kill-temporal): it could not say what a kill lands in
        }
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
        Optional<ActivityWatch.InFlight> aimed = aim ? awaitActivity(mustAim ? 60_000 : 20_000, !mustAim) : Optional.empty();
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
        Aim why = aimed.map(a -> wanted().contains(a.kind()) ? Aim.NEW_KIND : Aim.IN_FLIGHT).orElse(Aim.UNAIMED);
        if (restart == Restart.ALL_DOWN) {
          allDown(worker, why, aimed.orElse(null));
        } else if (kill(worker, restart, why, aimed.orElse(null), false)) {
          comeBack(worker, restart, restart == Restart.DELAYED ? 1_000 + random.nextInt(9_000) : 0);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Kills the worker running {@code attempt}, a failing node's compensation, from the kills kept for
   * it; it comes back at once or after {@code delayMillis}.
   *
   * @return whether it killed (false when that worker is already down)
   */
  boolean killCompensation(ActivityWatch.InFlight attempt, long delayMillis) {
    int worker = workerOf(attempt.workerPid());
    Restart restart = delayMillis > 0 ? Restart.DELAYED : Restart.AT_ONCE;
    if (worker < 0 || stopped || !kill(worker, restart, Aim.COMPENSATION, attempt, true)) {
      return false;
    }
    comeBack(worker, restart, delayMillis);
    return true;
  }

  /** A compensation ended without a kill inside it: its kept kill goes back to the killer. */
  void giveBack() {
    reserved.updateAndGet(r -> Math.max(0, r - 1));
  }

  /** Whether {@code pid} is a live worker of the stack. */
  boolean liveWorker(long pid) {
    int worker = workerOf(pid);
    return worker > 0 && live(worker);
  }

  /** The named kinds the campaign can still reach and has not hit yet. */
  Set<KillKind> wanted() {
    Set<KillKind> wanted = EnumSet.noneOf(KillKind.class);
    wanted.addAll(reachable);
    for (Kill k : kills) {
      k.inFlight().forEach(a -> wanted.remove(a.kind()));
    }
    return wanted;
  }

  private void comeBack(int worker, Restart restart, long delay) {
    if (restart == Restart.AT_ONCE) {
      synchronized (lock) {
        start(worker);
      }
    } else {
      restarts.schedule(() -> {
        synchronized (lock) {
          if (awaitingRestart.contains(worker)) {
            start(worker);
          }
        }
      }, delay, TimeUnit.MILLISECONDS);
    }
  }

  /**
   * Whether the kills still to come are at most one more than those needed for a third of all the
   * kills to land mid-activity (the campaign's rule, docs/reliability.md): from then on every kill is
   * aimed, so an unlucky schedule cannot miss the rule by chance.
   */
  private boolean midActivityShort() {
    // The kills kept for compensations are aimed at activities in flight: count them as mid-activity.
    long mid = kills.stream().filter(Kill::midActivity).count() + reserved.get();
    long needed = (target + 2) / 3 - mid;
    long remaining = target - kills.size() - reserved.get();
    return needed > 0 && needed >= remaining - 1;
  }

  /** Kills every live worker (the aimed one first), leaves them all down a few seconds, starts them. */
  private void allDown(int first, Aim aim, ActivityWatch.InFlight aimed) throws InterruptedException {
    List<Integer> killed = new ArrayList<>();
    if (!kill(first, Restart.ALL_DOWN, aim, aimed, false)) {
      return;
    }
    killed.add(first);
    for (int i = 1; i <= stack.workers(); i++) {
      if (i != first && live(i) && kill(i, Restart.ALL_DOWN, Aim.UNAIMED, null, false)) {
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

  /**
   * SIGKILLs a worker if it is live and the kills allow it: the killer's own within the kills not kept
   * for compensations, a compensation's within all of them.
   */
  private boolean kill(int worker, Restart restart, Aim aim, ActivityWatch.InFlight aimed, boolean kept) {
    long pid;
    long at;
    int number;
    synchronized (lock) {
      Optional<Long> current = stack.pid(StackLayout.worker(worker));
      int allowed = kept ? target : target - reserved.get();
      if (current.isEmpty() || awaitingRestart.contains(worker) || kills.size() + pending >= allowed
          || !serverServing.getAsBoolean()) {
        return false;
      }
      pid = current.get();
      at = System.currentTimeMillis();
      stack.killWorker(worker);
      awaitingRestart.add(worker);
      if (kept) {
        reserved.updateAndGet(r -> Math.max(0, r - 1));
      }
      pending++;
      number = kills.size() + pending;
    }
    // The attempts still open on the dead worker after the kill: they were in flight when it landed.
    List<ActivityWatch.InFlight> hit = watch.started().stream().filter(a -> a.workerPid() == pid).toList();
    hit.forEach(a -> aimedAt.merge(a.workflowId() + "/" + a.activity(), 1, Integer::sum));
    synchronized (lock) {
      kills.add(new Kill(worker, pid, at, restart, aim, aimed, hit));
      pending--;
    }
    say.accept(String.format("kill %d/%d: SIGKILL %s (pid %d)%s%s, restart %s", number, target,
        StackLayout.worker(worker), pid,
        hit.isEmpty() ? "" : " mid " + hit.stream().map(ActivityWatch.InFlight::toString).collect(Collectors.joining(", ")),
        aim == Aim.UNAIMED ? "" : " (aimed: " + aim.label() + ")",
        restart.name().toLowerCase().replace('_', ' ')));
    return true;
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

  /**
   * Waits for an activity to aim at ({@link KillAim}); a {@code patient} kill first waits up to
   * {@link KillAim#PATIENCE_MILLIS} for a kind the campaign has not hit yet.
   */
  private Optional<ActivityWatch.InFlight> awaitActivity(long millis, boolean patient) throws InterruptedException {
    long start = System.currentTimeMillis();
    while (!stopped && System.currentTimeMillis() < start + millis) {
      // At most two kills per activity of a run: kills land at random instants, they do not hunt one
      // activity until its retry policy gives up (docs/reliability.md).
      List<ActivityWatch.InFlight> candidates = watch.started().stream()
          .filter(a -> liveWorker(a.workerPid()))
          .filter(a -> aimedAt.getOrDefault(a.workflowId() + "/" + a.activity(), 0) < 2)
          .toList();
      boolean patienceOver = !patient || System.currentTimeMillis() - start >= KillAim.PATIENCE_MILLIS;
      Optional<ActivityWatch.InFlight> chosen = KillAim.choose(candidates, wanted(), patienceOver, random);
      if (chosen.isPresent()) {
        return chosen;
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
