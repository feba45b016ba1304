package dev.inplace.activities.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.Watch;
import io.fabric8.kubernetes.client.Watcher;
import io.fabric8.kubernetes.client.WatcherException;
import io.fabric8.kubernetes.client.dsl.Resource;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Wakes a wait loop as soon as the one Node it waits for changes, instead of at its next scheduled
 * look.
 *
 * <p>Why: the verify step waits for a Node that turns Ready some seconds after its service restarted.
 * Polling alone sees the change only at the next look, up to a whole backoff step late (measured:
 * 0.1-0.26 s per node, paid by every node of a window). A watch on that Node delivers the change
 * within milliseconds.
 *
 * <p>The watch only wakes the loop: the loop still decides on a fresh GET, exactly as without it,
 * and still sleeps at most its backoff between looks, so a watch that cannot be opened (RBAC without
 * {@code watch}, an API server restarting on an upgraded control plane, a mock without watches) or
 * that closes leaves the loop polling as before. The watch is opened on a thread of its own so its
 * opening never holds up a look, and the signal is raised once it is open, so a change between the
 * loop's last look and the watch's start is not missed (the loop looks again).
 *
 * <p>The watch is opened at the first {@link #await}, so a wait that is over at its first look costs
 * no watch. One per wait; close it on every exit (it closes the watch, or the watch still being
 * opened).
 */
final class NodeChangeSignal implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(NodeChangeSignal.class);

  private final Supplier<Resource<Node>> node;
  private final String what;
  private final Object lock = new Object();
  /** Guarded by {@link #lock}: a change (or the watch's start) not yet consumed by {@link #await}. */
  private boolean changed;
  /** Guarded by {@link #lock}. */
  private boolean started;
  /** Guarded by {@link #lock}. */
  private boolean closed;
  /** Guarded by {@link #lock}: the open watch, null before it opened or when it could not be. */
  private Watch watch;

  /**
   * @param node the Node to watch, resolved when the watch is opened
   * @param what the Node as log lines name it
   */
  NodeChangeSignal(Supplier<Resource<Node>> node, String what) {
    this.node = node;
    this.what = what;
  }

  /** Opens the watch on a thread of its own (once), so the caller's wait starts at once. */
  private void start() {
    Thread opener = new Thread(this::open, "node-watch-open");
    opener.setDaemon(true);
    opener.start();
  }

  private void open() {
    Watch opened;
    try {
      opened = node.get().watch(new Wake());
    } catch (RuntimeException e) {
      log.debug("No watch on {} ({}); its wait polls only", what, e.toString());
      return;
    }
    boolean closeNow;
    synchronized (lock) {
      closeNow = closed;
      if (!closeNow) {
        watch = opened;
        changed = true; // look once more: a change before the watch started was not delivered
        lock.notifyAll();
      }
    }
    if (closeNow) {
      opened.close();
    }
  }

  /**
   * Waits until the Node changed since the last call (or the watch started), or for {@code millis}
   * at most; returns at once if it already did.
   *
   * @return true when a change (or the watch's start) ended the wait, false when the time ran out
   */
  boolean await(long millis) throws InterruptedException {
    long deadline = System.nanoTime() + millis * 1_000_000L;
    synchronized (lock) {
      if (!started && !closed) {
        started = true;
        start();
      }
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
    Watch open;
    synchronized (lock) {
      closed = true;
      open = watch;
      watch = null;
    }
    if (open != null) {
      open.close();
    }
  }

  private void wake() {
    synchronized (lock) {
      changed = true;
      lock.notifyAll();
    }
  }

  /** Any event wakes the loop; what changed is for its fresh read to say. */
  private final class Wake implements Watcher<Node> {
    @Override
    public void eventReceived(Action action, Node resource) {
      wake();
    }

    @Override
    public void onClose(WatcherException cause) {
      log.debug("The watch on {} closed ({}); its wait polls only", what, cause.toString());
    }

    @Override
    public void onClose() {
      // Closed by close(): the wait is over.
    }
  }
}
