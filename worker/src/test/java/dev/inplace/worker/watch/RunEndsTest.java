package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.client.WorkflowFailedException;
import io.temporal.api.enums.v1.RetryState;
import io.temporal.failure.ApplicationFailure;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RunEndsTest {
  private final Map<String, CompletableFuture<Object>> waits = new HashMap<>();
  private final AtomicInteger asked = new AtomicInteger();
  private final RunEnds ends =
      new RunEnds(id -> {
        asked.incrementAndGet();
        return waits.computeIfAbsent(id, k -> new CompletableFuture<>());
      });
  private final AtomicInteger wakes = new AtomicInteger();

  @Test
  void aRunThatCompletesWakesItsResourceOnce() {
    ends.watch("run-1", wakes::incrementAndGet);
    assertEquals(0, wakes.get(), "nothing happens while the run is live");

    waits.get("run-1").complete("done");

    assertEquals(1, wakes.get());
    assertFalse(ends.watching("run-1"));
  }

  @Test
  void aRunThatFailsIsCancelledOrTerminatedAlsoWakesIt() {
    ends.watch("run-1", wakes::incrementAndGet);

    waits.get("run-1").completeExceptionally(new CompletionException(new WorkflowFailedException(
        WorkflowExecution.newBuilder().setWorkflowId("run-1").build(), "Upgrade",
        io.temporal.api.enums.v1.EventType.EVENT_TYPE_WORKFLOW_EXECUTION_FAILED, 0,
        RetryState.RETRY_STATE_NON_RETRYABLE_FAILURE, ApplicationFailure.newFailure("halted", "NodeFailed"))));

    assertEquals(1, wakes.get());
  }

  @Test
  void aRunWatchedAgainWhileLiveIsWaitedForOnce() {
    ends.watch("run-1", wakes::incrementAndGet);
    ends.watch("run-1", wakes::incrementAndGet);
    assertEquals(1, asked.get());

    waits.get("run-1").complete(null);

    assertEquals(1, wakes.get(), "one wake, not one per look at the resource");
  }

  @Test
  void aWaitThatBreaksWakesNobodyAndTheNextLookWaitsAgain() {
    ends.watch("run-1", wakes::incrementAndGet);

    waits.remove("run-1").completeExceptionally(new CompletionException(new io.grpc.StatusRuntimeException(io.grpc.Status.UNAVAILABLE)));

    assertEquals(0, wakes.get(), "the server went away: the run has not ended, the timer looks later");
    assertFalse(ends.watching("run-1"));
    ends.watch("run-1", wakes::incrementAndGet);
    assertTrue(ends.watching("run-1"));
    assertEquals(2, asked.get());
  }

  @Test
  void aWaitThatCannotBeStartedWakesNobodyAndIsTriedAgain() {
    RunEnds refusing = new RunEnds(id -> {
      asked.incrementAndGet();
      throw new IllegalStateException("client closed");
    });

    refusing.watch("run-1", wakes::incrementAndGet);
    refusing.watch("run-1", wakes::incrementAndGet);

    assertEquals(0, wakes.get());
    assertEquals(2, asked.get());
    assertFalse(refusing.watching("run-1"));
  }
}
