package dev.inplace.workflows.api;

/**
 * How a NodeUpgrade run ended, as it tells its parent's workflow ({@link
 * NodeUpgradeRequest#reportEnd()}): the result, or the failure it ended with. The parent run that
 * follows a child it took over at continue-as-new learns the outcome from this report, since the
 * child's completion goes to the run that started it.
 *
 * @param node the Node's name
 * @param workflowId the reporting run's workflow ID
 * @param runId the reporting run's run ID: a parent takes a report only from the run it follows (a node
 *     stood down and started again has two runs under one workflow ID)
 * @param result the result of a run that succeeded; null when it failed
 * @param failureType the failure type of a run that failed ({@code UpgradeFailures}); null when it succeeded
 * @param failureMessage what went wrong, for people; null when it succeeded
 * @param failure the failure's details when it carried a {@link NodeFailure} (the saga's failures all do)
 */
public record NodeEnd(
    String node,
    String workflowId,
    String runId,
    NodeUpgradeResult result,
    String failureType,
    String failureMessage,
    NodeFailure failure) {

  public boolean upgraded() {
    return failureType == null && result != null;
  }
}
