package dev.inplace.worker.watch;

import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * Wakes a CR the moment one of its runs ends, so its status (and a WorkersUpgrade waiting for it)
 * does not wait for the next status interval. One long poll per live run (Temporal's result wait,
 * no thread held); the status timer stays the safety net for anything this misses.
 */
final class RunEnds {
  private final Function<String, CompletableFuture<?>> whenClosed;
  private final Set<String> watched = ConcurrentHashMap.newKeySet();

  RunEnds(WorkflowClient client) {
    this(workflowId -> client.newUntypedWorkflowStub(workflowId).getResultAsync(Object.class));
  }

  /** @param whenClosed completes when the run with that ID (its last run, after continue-as-new) has closed */
  RunEnds(Function<String, CompletableFuture<?>> whenClosed) {
    this.whenClosed = whenClosed;
  }

  /**
   * Calls {@code wake} once when the run ends (completed, failed, cancelled, terminated or timed
   * out). A run already watched is not watched twice; a wait that breaks for another reason (the
   * server unreachable) wakes nobody, so the next status look registers it again without a loop.
   */
  void watch(String workflowId, Runnable wake) {
    if (!watched.add(workflowId)) {
      return;
    }
    CompletableFuture<?> closed;
    try {
      closed = whenClosed.apply(workflowId);
    } catch (RuntimeException e) {
      watched.remove(workflowId);
      return;
    }
    closed.whenComplete(
        (result, error) -> {
          watched.remove(workflowId);
          if (error == null || ended(error)) {
            wake.run();
          }
        });
  }

  /** Whether a run is being waited for (tests). */
  boolean watching(String workflowId) {
    return watched.contains(workflowId);
  }

  private static boolean ended(Throwable error) {
    Throwable e = error;
    while (e instanceof CompletionException && e.getCause() != null) {
      e = e.getCause();
    }
    return e instanceof WorkflowFailedException;
  }
}
