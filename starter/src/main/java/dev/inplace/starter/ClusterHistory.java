package dev.inplace.starter;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * The past (and current) runs of one cluster, newest first, as {@code inplace history} prints them.
 *
 * @param notes what could not be read (for example a Temporal server without List), so an empty or
 *     short list is not mistaken for the whole history
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record ClusterHistory(String namespace, String name, List<Run> runs, List<String> notes) {

  /**
   * One run.
   *
   * @param source where the row comes from: {@code ControlPlaneUpgrade/NAME}, {@code
   *     WorkersUpgrade/NAME} (the CR's status.history or status.runs) or {@code temporal} (visibility)
   * @param result Succeeded, Failed, Aborted, or the phase of a run still going
   * @param total nodes in the run (null when only Temporal's record was read)
   */
  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Run(
      String workflowId,
      String kind,
      String machineDeployment,
      String fromVersion,
      String toVersion,
      String started,
      String finished,
      String result,
      String reason,
      Integer total,
      Integer upgraded,
      Integer failed,
      Integer skipped,
      String source) {

    Run withTemporal(Run t) {
      return new Run(workflowId, kind, machineDeployment, or(fromVersion, t.fromVersion), or(toVersion, t.toVersion),
          or(started, t.started), or(finished, t.finished), result, reason, total, upgraded, failed, skipped, source);
    }

    private static String or(String a, String b) {
      return a != null ? a : b;
    }
  }
}
