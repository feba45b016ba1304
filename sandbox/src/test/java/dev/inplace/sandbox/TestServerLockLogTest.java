package dev.inplace.sandbox;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import io.temporal.serviceclient.WorkflowServiceStubs;
import io.temporal.serviceclient.WorkflowServiceStubsOptions;
import io.temporal.testserver.TestServer;
import io.temporal.worker.WorkerFactory;
import io.temporal.workflow.Workflow;
import io.temporal.workflow.WorkflowInterface;
import io.temporal.workflow.WorkflowMethod;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TestServerLockLogTest {
  private static final String QUEUE = "lock-log";
  private static final int RUNS = 60;

  @WorkflowInterface
  public interface Tick {
    @WorkflowMethod
    int tick(int n);
  }

  public static class TickImpl implements Tick {
    @Override
    public int tick(int n) {
      Workflow.sleep(Duration.ofMillis(1));
      return n;
    }
  }

  @Test
  void theServersLockLogKeepsNoUnlockEntriesAndHalvesItsGrowth() throws Exception {
    int asShipped;
    try (TestServer.InProcessTestServer server = TestServer.createServer(true)) {
      runTicks(server);
      asShipped = TestServerLockLog.entries(server);
    }
    try (TestServer.InProcessTestServer server = TestServer.createServer(true)) {
      assertTrue(TestServerLockLog.install(server), "the SDK's internals are as TestServerLockLog expects");
      runTicks(server);
      int entries = TestServerLockLog.entries(server);
      assertTrue(asShipped > 3 * RUNS, asShipped + " entries as shipped after " + RUNS + " workflows");
      assertTrue(entries <= asShipped / 2 + 5, entries + " entries against " + asShipped + " as shipped");
    }
  }

  @Test
  void aReleasedLockIsFoundFromTheNewestEntry() {
    TestServerLockLog.LockLog log = new TestServerLockLog.LockLog();
    AtomicInteger comparisons = new AtomicInteger();
    List<Object> entries = new ArrayList<>();
    for (int i = 0; i < 1_000; i++) {
      Object entry = new Object() {
        @Override
        public boolean equals(Object other) {
          comparisons.incrementAndGet();
          return this == other;
        }

        @Override
        public int hashCode() {
          return System.identityHashCode(this);
        }
      };
      entries.add(entry);
      log.add(entry);
    }
    assertTrue(log.remove(entries.get(999)));
    assertTrue(log.remove(entries.get(997)));
    assertEquals(998, log.size());
    assertTrue(comparisons.get() <= 3, comparisons.get() + " comparisons");
  }

  @Test
  void installingTwiceKeepsOneLog() throws Exception {
    try (TestServer.InProcessTestServer server = TestServer.createServer(true)) {
      assertTrue(TestServerLockLog.install(server));
      int before = TestServerLockLog.entries(server);
      assertTrue(TestServerLockLog.install(server));
      assertEquals(before, TestServerLockLog.entries(server));
    }
  }

  private static void runTicks(TestServer.InProcessTestServer server) {
    WorkflowServiceStubs stubs = WorkflowServiceStubs.newServiceStubs(
        WorkflowServiceStubsOptions.newBuilder().setChannel(server.getChannel()).build());
    WorkflowClient client = WorkflowClient.newInstance(stubs);
    WorkerFactory factory = WorkerFactory.newInstance(client);
    factory.newWorker(QUEUE).registerWorkflowImplementationTypes(TickImpl.class);
    factory.start();
    try {
      for (int i = 0; i < RUNS; i++) {
        Tick tick = client.newWorkflowStub(Tick.class,
            WorkflowOptions.newBuilder().setTaskQueue(QUEUE).setWorkflowId("tick-" + i).build());
        assertEquals(i, tick.tick(i));
      }
    } finally {
      factory.shutdownNow();
      stubs.shutdownNow();
    }
  }
}
