package dev.inplace.sandbox.chaos;

import dev.inplace.sandbox.stack.LocalStack;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Kills the Temporal dev server with SIGKILL mid-run ({@code --kill-temporal N}) and starts it again on
 * the same SQLite database and ports, N times at seeded instants. Each kill waits for an activity the
 * server reports started, so it lands while the runs have work in flight; the server stays down a
 * seeded 1-6 s. While it is down the worker killer holds its kills ({@link #serving}): a worker kill
 * is attributed by asking the server what was in flight, which it cannot answer then.
 */
final class TemporalKiller implements Runnable {
  /** How long a kill waits for an activity in flight before it lands anyway. */
  private static final long AIM_MILLIS = 60_000;

  /**
   * One SIGKILL of the server.
   *
   * @param atSeconds when it was sent, in seconds since the campaign started (as the log lines)
   * @param downSeconds how long the server was left down before it was started again
   * @param servingAgainSeconds from the kill until the restarted server answered GetSystemInfo and
   *     described the {@code default} namespace
   * @param activitiesInFlight the started activity attempts the server reported just before the kill
   */
  public record ServerKill(int kill, long pid, double atSeconds, double downSeconds, double servingAgainSeconds,
      int activitiesInFlight) {}

  private final LocalStack stack;
  private final ActivityWatch watch;
  private final Random random;
  private final int target;
  private final long campaignStartNanos;
  private final Consumer<String> say;
  private final List<ServerKill> kills = new CopyOnWriteArrayList<>();
  private volatile boolean down;
  private volatile boolean stopped;
  private volatile String failure;

  TemporalKiller(LocalStack stack, ActivityWatch watch, long seed, int target, long campaignStartNanos,
      Consumer<String> say) {
    this.stack = stack;
    this.watch = watch;
    // Its own stream of the campaign's seed: adding server kills does not move the worker kills' choices.
    this.random = new Random(seed ^ 0x7e4d_0a11_5e5e_c0deL);
    this.target = target;
    this.campaignStartNanos = campaignStartNanos;
    this.say = say;
  }

  /** Whether the server is up (always, but between a kill and the restarted server serving). */
  boolean serving() {
    return !down;
  }

  List<ServerKill> kills() {
    return List.copyOf(kills);
  }

  /** Why the server could not be started again, if it could not (the stack is broken then). */
  String failure() {
    return failure;
  }

  /**
   * No further kills; a kill under way still ends with the server started again. Not by an interrupt:
   * that would stop the restart's wait for the server, and leave it down.
   */
  void stop() {
    stopped = true;
  }

  @Override
  public void run() {
    try {
      while (!stopped && kills.size() < target && failure == null) {
        sleep(10_000 + random.nextInt(20_000));
        int inFlight = awaitActivity();
        if (stopped) {
          return;
        }
        killAndRestart(inFlight);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Waits up to {@link #AIM_MILLIS} for a started activity of the campaign's runs; how many there are. */
  private int awaitActivity() throws InterruptedException {
    long until = System.currentTimeMillis() + AIM_MILLIS;
    while (!stopped && System.currentTimeMillis() < until) {
      int started = watch.started().size();
      if (started > 0) {
        return started;
      }
      sleep(200);
    }
    return 0;
  }

  private void killAndRestart(int inFlight) {
    long downMillis = 1_000 + random.nextInt(5_000);
    int number = kills.size() + 1;
    down = true;
    long at = System.nanoTime();
    long pid;
    try {
      pid = stack.killTemporal();
      say.accept(String.format("server kill %d/%d: SIGKILL the Temporal dev server (pid %d) with %d activit%s in"
              + " flight; down for %.1f s", number, target, pid, inFlight, inFlight == 1 ? "y" : "ies", downMillis / 1000.0));
      sleepUninterruptibly(downMillis);
      long restarted = stack.restartTemporal();
      double again = (System.nanoTime() - at) / 1e9;
      kills.add(new ServerKill(number, pid, seconds(at), downMillis / 1000.0, Math.round(again * 10) / 10.0, inFlight));
      say.accept(String.format("server kill %d/%d: the dev server serves again (pid %d, same database), %.1f s after"
          + " the kill", number, target, restarted, again));
    } catch (LocalStack.StackException e) {
      failure = "server kill " + number + ": " + e.getMessage().lines().findFirst().orElse("");
      say.accept(failure);
    } finally {
      down = false;
    }
  }

  private double seconds(long nanos) {
    return Math.round((nanos - campaignStartNanos) / 1e8) / 10.0;
  }

  /** The server must come back even when the campaign stops meanwhile: the verdict asks it. */
  private static void sleepUninterruptibly(long millis) {
    long until = System.currentTimeMillis() + millis;
    boolean interrupted = false;
    while (System.currentTimeMillis() < until) {
      try {
        Thread.sleep(Math.max(1, until - System.currentTimeMillis()));
      } catch (InterruptedException e) {
        interrupted = true;
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** Sleeps, ending early once stopped (the campaign stops it without an interrupt, see {@link #stop}). */
  private void sleep(long millis) throws InterruptedException {
    long until = System.currentTimeMillis() + millis;
    while (!stopped && System.currentTimeMillis() < until) {
      Thread.sleep(Math.min(200, Math.max(1, until - System.currentTimeMillis())));
    }
  }
}
