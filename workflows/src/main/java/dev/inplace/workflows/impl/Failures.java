package dev.inplace.workflows.impl;

import io.temporal.client.WorkflowExecutionAlreadyStarted;
import io.temporal.failure.ActivityFailure;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.failure.ChildWorkflowFailure;
import io.temporal.failure.TemporalFailure;
import io.temporal.failure.TerminatedFailure;
import io.temporal.failure.TimeoutFailure;

/** Reads the type and the human reason out of the failures parent runs catch. */
final class Failures {
  private Failures() {}

  /** The vocabulary type an activity or child failed with, or {@code fallback} when it has none. */
  static String typeOf(TemporalFailure failure, String fallback) {
    return cause(failure) instanceof ApplicationFailure app ? app.getType() : fallback;
  }

  /** What went wrong, for people: the activity's own message rather than Temporal's wrapper. */
  static String describe(TemporalFailure failure) {
    Throwable cause = cause(failure);
    if (cause instanceof ApplicationFailure app) {
      return app.getOriginalMessage();
    }
    if (cause instanceof TimeoutFailure timeout) {
      return "timed out (" + timeout.getTimeoutType() + ")";
    }
    if (cause instanceof TerminatedFailure) {
      return "terminated";
    }
    if (cause instanceof WorkflowExecutionAlreadyStarted) {
      return "a run with this workflow ID already exists";
    }
    if (cause instanceof TemporalFailure temporal) {
      return temporal.getOriginalMessage();
    }
    return cause == null ? failure.getMessage() : cause.getMessage();
  }

  /** True when the failure is (or wraps) a cancellation of this run. */
  static boolean isCancellation(Throwable failure) {
    for (Throwable t = failure; t != null; t = t.getCause()) {
      if (t instanceof CanceledFailure) {
        return true;
      }
    }
    return false;
  }

  /** Lets a cancellation through untouched, so a cancelled run ends cancelled, not failed. */
  static void rethrowIfCancelled(TemporalFailure failure) {
    if (failure instanceof CanceledFailure cancelled) {
      throw cancelled;
    }
    if (cause(failure) instanceof CanceledFailure cancelled) {
      throw cancelled;
    }
  }

  private static Throwable cause(TemporalFailure failure) {
    return failure instanceof ActivityFailure || failure instanceof ChildWorkflowFailure
        ? failure.getCause()
        : failure;
  }
}
