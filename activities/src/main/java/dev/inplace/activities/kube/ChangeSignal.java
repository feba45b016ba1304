package dev.inplace.activities.kube;

import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes a wait loop as soon as something it waits on changes, instead of at its next scheduled look:
 * the one Node the verify step waits for; the pods on a node being drained, and the pods and budget
 * of a PodDisruptionBudget that refused an eviction.
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

  /** A watch to open: what it watches (for log lines) and how to open it with a watcher. */
  private record Source(String what, Function<Watcher<Object>, Watch> open) {}

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

  /** A signal for one watched object or list. */
  static <T> ChangeSignal of(String what, Function<Watcher<T>, Watch> open) {
    ChangeSignal signal = new ChangeSignal();
    signal.watch(what, open);
    return signal;
  }

  ChangeSignal() {}

  /**
   * Also wakes on changes of {@code what}, watched from the next {@link #await} on; a {@code what}
   * already added is not watched twice.
   *
   * @param open opens the watch with the watcher given (e.g. {@code w -> resource.watch(w)})
   */
  @SuppressWarnings({"unchecked", "rawtypes"}) // the watcher ignores what it is given
  <T> void watch(String what, Function<Watcher<T>, Watch> open) {
    synchronized (lock) {
      if (!closed && added.add(what)) {
        toOpen.add(new Source(what, (Function) open));
      }
    }
  }

  private void open(Source source) {
    Watch opened;
    try {
      opened = source.open().apply(new Wake(source.what()));
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

  /** Any event wakes the loop; what changed is for its fresh read to say. */
  private final class Wake implements Watcher<Object> {
    private final String what;

    Wake(String what) {
      this.what = what;
    }

    @Override
    public void eventReceived(Action action, Object resource) {
      wake();
    }

    @Override
    public void onClose(WatcherException cause) {
      log.debug("The watch on {} closed ({}); the wait polls it", what, cause.toString());
    }

    @Override
    public void onClose() {
      // Closed by close(): the wait is over.
    }
  }
}
