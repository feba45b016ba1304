package dev.inplace.activities.kube;

import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.BiPredicate;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes a wait loop as soon as something it waits on changes, instead of at its next scheduled look:
 * the one Node the verify step waits for (any event); a pod leaving a node being drained, and a pod
 * of a PodDisruptionBudget that refused an eviction turning Ready or the budget allowing a disruption
 * (only those events, so a busy Deployment's status updates cost the drain no looks).
 *
 * <p>Why: polling alone sees a change only at the next look, up to a whole backoff step late
 * (measured for verify: 0.1-0.26 s per node, paid by every node of a window; for a drain waiting on
 * a budget, the replacement pod's readiness seen up to 0.4 s late). A watch delivers the change
 * within milliseconds.
 *
 * <p>A watch only wakes the loop: the loop still decides on a fresh read, exactly as without it,
 * and still sleeps at most its backoff between looks, so a watch that cannot be opened (RBAC without
 * {@code watch}, an API server restarting on an upgraded control plane, a mock without watches) or
 * that closes leaves the loop polling as before. Each watch is opened on a thread of its own so its
 * opening never holds up a look, and the signal is raised once it is open, so a change between the
 * loop's last look and the watch's start is not missed (the loop looks again).
 *
 * <p>Watches are opened at the first {@link #await} after they were added, so a wait that is over at
 * its first look costs no watch. One signal per wait; close it on every exit (it closes its watches,
 * and those still being opened).
 */
final class ChangeSignal implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(ChangeSignal.class);

  /** A watch to open: what it watches (for log lines), how to open it, and which events wake the wait. */
  private record Source(String what, Function<Watcher<Object>, Watch> open, BiPredicate<Watcher.Action, Object> wakes) {}

  private final Object lock = new Object();
  /** Guarded by {@link #lock}: a change (or a watch's start) not yet consumed by {@link #await}. */
  private boolean changed;
  /** Guarded by {@link #lock}. */
  private boolean closed;
  /** Guarded by {@link #lock}: sources added and not opened yet. */
  private final List<Source> toOpen = new ArrayList<>();
  /** Guarded by {@link #lock}: what has been added, so a source is watched once. */
  private final Set<String> added = new HashSet<>();
  /** Guarded by {@link #lock}: the open watches. */
  private final List<Watch> watches = new ArrayList<>();

  /** A signal for one watched object or list, woken by any of its events. */
  static <T> ChangeSignal of(String what, Function<Watcher<T>, Watch> open) {
    ChangeSignal signal = new ChangeSignal();
    signal.watch(what, open, (action, resource) -> true);
    return signal;
  }

  ChangeSignal() {}

  /**
   * Also wakes on the changes of {@code what} that {@code wakes} accepts, watched from the next
   * {@link #await} on; a {@code what} already added is not watched twice.
   *
   * @param open opens the watch with the watcher given (e.g. {@code w -> resource.watch(w)})
   * @param wakes which events end the wait (the others, a busy object's status updates for one, do
   *     not cost the loop a look)
   */
  @SuppressWarnings({"unchecked", "rawtypes"}) // the watcher hands each event to its own source's test
  <T> void watch(String what, Function<Watcher<T>, Watch> open, BiPredicate<Watcher.Action, T> wakes) {
    synchronized (lock) {
      if (!closed && added.add(what)) {
        toOpen.add(new Source(what, (Function) open, (BiPredicate) wakes));
      }
    }
  }

  private void open(Source source) {
    Watch opened;
    try {
      opened = source.open().apply(new Wake(source));
    } catch (RuntimeException e) {
      log.debug("No watch on {} ({}); the wait polls it", source.what(), e.toString());
      return;
    }
    boolean closeNow;
    synchronized (lock) {
      closeNow = closed;
      if (!closeNow) {
        watches.add(opened);
        changed = true; // look once more: a change before the watch started was not delivered
        lock.notifyAll();
      }
    }
    if (closeNow) {
      opened.close();
    }
  }

  /**
   * Waits until something watched changed since the last call (or a watch started), or for {@code
   * millis} at most; returns at once if it already did. Opens, each on a thread of its own, the
   * watches added since the last call.
   *
   * @return true when a change (or a watch's start) ended the wait, false when the time ran out
   */
  boolean await(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000L;
    synchronized (lock) {
      for (Source source : toOpen) {
        Thread opener = new Thread(() -> open(source), "watch-open");
        opener.setDaemon(true);
        opener.start();
      }
      toOpen.clear();
      while (!changed) {
        long left = (deadline - System.nanoTime()) / 1_000_000L;
        if (left <= 0) {
          return false;
        }
        lock.wait(left);
      }
      changed = false;
      return true;
    }
  }

  @Override
  public void close() {
    List<Watch> open;
    synchronized (lock) {
      closed = true;
      toOpen.clear();
      open = new ArrayList<>(watches);
      watches.clear();
    }
    open.forEach(Watch::close);
  }

  private void wake() {
    synchronized (lock) {
      changed = true;
      lock.notifyAll();
    }
  }

  /** An event its source accepts wakes the loop; what changed is for the loop's fresh read to say. */
  private final class Wake implements Watcher<Object> {
    private final Source source;

    Wake(Source source) {
      this.source = source;
    }

    @Override
    public void eventReceived(Action action, Object resource) {
      if (source.wakes().test(action, resource)) {
        wake();
      }
    }

    @Override
    public void onClose(WatcherException cause) {
      log.debug("The watch on {} closed ({}); the wait polls it", source.what(), cause.toString());
    }

    @Override
    public void onClose() {
      // Closed by close(): the wait is over.
    }
  }
}
