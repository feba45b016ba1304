package dev.inplace.sandbox;

import io.temporal.internal.testservice.TestServicesStarter;
import io.temporal.testserver.TestServer;
import java.lang.reflect.Field;
import java.util.Collection;
import java.util.LinkedList;
import java.util.concurrent.locks.Lock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps the log of Temporal's test server's time locks from slowing the server down as it grows.
 *
 * <p>The test server (SDK 1.38, {@code SelfAdvancingTimerImpl}) records every time lock and every
 * unlock by name in one {@code LinkedList} that it only uses for diagnostics, and never drops the
 * unlock entries; releasing a lock by its handle then scans that list from its head. A run of 1,000
 * nodes leaves about ten thousand entries, and the unlocks' scans took 29% of the benchmark process's
 * CPU samples, growing with every workflow task the server ever handled (docs/benchmarks.md). A real
 * Temporal server has no such list. {@link #install} replaces it, under the timer's own lock, by a
 * {@link LockLog}: no unlock entries, and a release searches from the newest entry. This is
 * reflection on the SDK's internals: when a later SDK changes them, the server runs as shipped and a
 * warning says so ({@code TestServerLockLogTest} fails the build first).
 */
public final class TestServerLockLog {
  private static final Logger log = LoggerFactory.getLogger(TestServerLockLog.class);

  private TestServerLockLog() {}

  /** For a server started in this process ({@link TestServer#createServer(boolean)}). */
  public static boolean install(TestServer.InProcessTestServer server) {
    try {
      return install((TestServicesStarter) read(server, "testServicesStarter"));
    } catch (ReflectiveOperationException | RuntimeException e) {
      return unsupported(e);
    }
  }

  /** For a server whose services this process registers itself ({@code TemporalServerMain}). */
  public static boolean install(TestServicesStarter services) {
    try {
      Object timer = read(services, "selfAdvancingTimer");
      Lock lock = (Lock) read(timer, "lock");
      Field eventsField = field(timer.getClass(), "lockEvents");
      lock.lock();
      try {
        @SuppressWarnings("unchecked")
        LinkedList<Object> events = (LinkedList<Object>) eventsField.get(timer);
        if (events instanceof LockLog) {
          return true;
        }
        LockLog bounded = new LockLog();
        events.forEach(bounded::add);
        eventsField.set(timer, bounded);
      } finally {
        lock.unlock();
      }
      return true;
    } catch (ReflectiveOperationException | RuntimeException e) {
      return unsupported(e);
    }
  }

  /** How many entries the server's lock log holds now (tests). */
  static int entries(TestServer.InProcessTestServer server) throws ReflectiveOperationException {
    Object timer = read(read(server, "testServicesStarter"), "selfAdvancingTimer");
    Lock lock = (Lock) read(timer, "lock");
    lock.lock();
    try {
      return ((Collection<?>) read(timer, "lockEvents")).size();
    } finally {
      lock.unlock();
    }
  }

  private static boolean unsupported(Exception e) {
    log.warn("Temporal's test server's lock log could not be bounded ({}); it runs as shipped, and slows as it"
        + " grows", e.toString());
    return false;
  }

  private static Object read(Object owner, String name) throws ReflectiveOperationException {
    return field(owner.getClass(), name).get(owner);
  }

  private static Field field(Class<?> type, String name) throws NoSuchFieldException {
    Field f = type.getDeclaredField(name);
    f.setAccessible(true);
    return f;
  }

  /**
   * The list the server adds its lock events to. It drops unlock entries (diagnostics only: nothing
   * ever removes them) and looks for the entry a handle releases from the newest end, where a lock
   * just released almost always is. Lock entries taken by name stay, as in the server's own list
   * (the server never removes them either): about 60 bytes per lock taken, no scan over them.
   */
  static final class LockLog extends LinkedList<Object> {
    private static final long serialVersionUID = 1L;

    private transient Field lockType;

    @Override
    public boolean add(Object event) {
      if (isUnlock(event)) {
        return true;
      }
      return super.add(event);
    }

    @Override
    public boolean remove(Object event) {
      return removeLastOccurrence(event);
    }

    private boolean isUnlock(Object event) {
      try {
        if (lockType == null || lockType.getDeclaringClass() != event.getClass()) {
          lockType = field(event.getClass(), "lockType");
        }
        return "UNLOCK".equals(((Enum<?>) lockType.get(event)).name());
      } catch (ReflectiveOperationException | RuntimeException e) {
        return false;
      }
    }
  }
}
