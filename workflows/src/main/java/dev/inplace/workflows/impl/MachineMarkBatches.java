package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkOutcome;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarksRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarksResult;
import dev.inplace.workflows.options.ActivityOptionsCatalog;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.workflow.Async;
import io.temporal.workflow.CompletablePromise;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;

/**
 * A parent run's skip-remediation marks, in batches ({@link ParentMachineMarks#BATCHED_MACHINE_MARKS_CHANGE}):
 * the marks and unmarks its node threads ask for while a batch is under way go together in the
 * next one, a single {@link ClusterApiActivities#markMachines} activity. A regular activity, not a
 * local one: a workflow task with a local activity pending cannot complete, so the commands of the
 * same task (the next nodes' permits and children) would wait for the marks of others; a regular
 * activity is scheduled with them. A wave of nodes costs the parent one or two activities instead
 * of two local activities per node, each of which ran the workflow's event loop once more through
 * every node thread in flight.
 *
 * <p>Requests are served in the order they were asked, by one workflow thread in a scope detached
 * from the run's cancellation, so an unmark asked during a cancellation still runs. A caller waits
 * for its own outcome whatever the cancellation, and sees what a single mark would have given it:
 * the result, the batch's {@link ActivityFailure}, or its Machine's own failure as an {@link
 * ApplicationFailure} of the same type.
 */
final class MachineMarkBatches {

  private record Pending(MachineMarkRequest request, CompletablePromise<MachineMarkOutcome> outcome) {}

  private final ClusterApiActivities marks =
      Workflow.newActivityStub(ClusterApiActivities.class, ActivityOptionsCatalog.kubeCall());
  private final List<Pending> queue = new ArrayList<>();
  private boolean serving;

  /** Sets or removes one Machine's mark with the next batch; blocks until that batch has run. */
  MachineMarkResult set(MachineMarkRequest request) {
    CompletablePromise<MachineMarkOutcome> outcome = Workflow.newPromise();
    queue.add(new Pending(request, outcome));
    if (!serving) {
      serving = true;
      Workflow.newDetachedCancellationScope(() -> Async.procedure(this::serve)).run();
    }
    // Not cancellable: the batch runs anyway, and the caller must know whether its Machine is marked.
    Workflow.newDetachedCancellationScope(() -> Workflow.await(outcome::isCompleted)).run();
    MachineMarkOutcome done = outcome.get();
    if (done.failureType() != null) {
      throw ApplicationFailure.newNonRetryableFailure(done.failureMessage(), done.failureType());
    }
    return new MachineMarkResult(done.changed());
  }

  private void serve() {
    while (true) {
      Workflow.await(() -> !queue.isEmpty());
      List<Pending> batch = new ArrayList<>(queue.subList(0, Math.min(queue.size(), ClusterApiActivities.MAX_MARKS_PER_BATCH)));
      queue.subList(0, batch.size()).clear();
      try {
        MachineMarksResult result =
            marks.markMachines(new MachineMarksRequest(batch.stream().map(Pending::request).toList()));
        if (result == null || result.outcomes() == null || result.outcomes().size() != batch.size()) {
          // A bug in the activity, not a mark failure: the node threads hand it to the main thread.
          IllegalStateException bug = new IllegalStateException("markMachines answered "
              + (result == null || result.outcomes() == null ? "nothing" : result.outcomes().size() + " outcomes")
              + " for " + batch.size() + " marks");
          batch.forEach(p -> p.outcome().completeExceptionally(bug));
          continue;
        }
        for (int i = 0; i < batch.size(); i++) {
          batch.get(i).outcome().complete(result.outcomes().get(i));
        }
      } catch (ActivityFailure e) {
        batch.forEach(p -> p.outcome().completeExceptionally(e));
      }
    }
  }
}
