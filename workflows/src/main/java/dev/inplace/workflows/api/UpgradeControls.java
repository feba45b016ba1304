package dev.inplace.workflows.api;

import io.temporal.workflow.QueryMethod;
import io.temporal.workflow.UpdateMethod;
import io.temporal.workflow.UpdateValidatorMethod;

/**
 * Operator controls shared by ControlPlaneUpgrade and WorkersUpgrade, as Workflow Updates with
 * validators (a refused update leaves no trace in history). The same names work from the CLI:
 * {@code temporal workflow update execute --workflow-id ID --name pause}.
 */
public interface UpgradeControls {

  /** Start no new node; nodes in flight finish. */
  @UpdateMethod
  String pause();

  @UpdateValidatorMethod(updateName = "pause")
  void validatePause();

  @UpdateMethod
  String resume();

  @UpdateValidatorMethod(updateName = "resume")
  void validateResume();

  /** Finish nodes in flight, start no more, record what was done, end the run as aborted. */
  @UpdateMethod
  String abort();

  @UpdateValidatorMethod(updateName = "abort")
  void validateAbort();

  /** New window size: a count ({@code 3}) or a percent of the pool ({@code 25%}), at least 1. */
  @UpdateMethod
  String setMaxUnavailable(String maxUnavailable);

  @UpdateValidatorMethod(updateName = "setMaxUnavailable")
  void validateSetMaxUnavailable(String maxUnavailable);

  /** Run a failed node's upgrade again (a new NodeUpgrade run with the same workflow ID). */
  @UpdateMethod
  String retryNode(String node);

  @UpdateValidatorMethod(updateName = "retryNode")
  void validateRetryNode(String node);

  /** Leave a failed (or not yet started) node on its version and go on without it. */
  @UpdateMethod
  String skipNode(String node);

  @UpdateValidatorMethod(updateName = "skipNode")
  void validateSkipNode(String node);

  @QueryMethod
  UpgradeProgress progress();
}
