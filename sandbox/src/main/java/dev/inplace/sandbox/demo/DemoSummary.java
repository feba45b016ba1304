package dev.inplace.sandbox.demo;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;
import java.util.Map;

/**
 * The demo's result; printed as the last line with {@code --json}. {@code failed} counts nodes whose
 * upgrade failed (rolled back or not), {@code rolledBack} those put back on their previous version.
 * {@code processes} (with {@code --topology processes} only) gives the PIDs of the demo, Temporal's
 * test server, the estate and each worker. {@code startupSeconds}: from the demo JVM's start to
 * the moment its clock started (the estate, Temporal, the worker, and with resources the CRDs, the
 * release catalogue and the watcher); {@code wallSeconds} runs from there. With {@code --temporal
 * dev-server}: {@code temporal}, the server's version as its GetSystemInfo answers, and {@code uiUrl},
 * its Web UI, present only when the UI answered HTTP 200 at the end of the run. With {@code --kube
 * real}: {@code capiVersion}, the version the running Cluster API core manager reports; {@code
 * machinesReplaced}, how many of the Machines there were before the run are gone or have another
 * UID after it and a settle check; and (with {@code --mode extension}) {@code hookCalls}, the calls
 * the runtime extension answered per hook.
 */
public record DemoSummary(
    int nodes,
    long upgraded,
    long failed,
    long rolledBack,
    long notStarted,
    String version,
    double wallSeconds,
    double startupSeconds,
    List<NodeOutcome> results,
    @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Object> processes,
    @JsonInclude(JsonInclude.Include.NON_NULL) String temporal,
    @JsonInclude(JsonInclude.Include.NON_NULL) String uiUrl,
    @JsonInclude(JsonInclude.Include.NON_NULL) String capiVersion,
    @JsonInclude(JsonInclude.Include.NON_NULL) Integer machinesReplaced,
    @JsonInclude(JsonInclude.Include.NON_NULL) Map<String, Long> hookCalls) {

  public DemoSummary(
      int nodes, long upgraded, long failed, long rolledBack, long notStarted, String version, double wallSeconds,
      double startupSeconds, List<NodeOutcome> results) {
    this(nodes, upgraded, failed, rolledBack, notStarted, version, wallSeconds, startupSeconds, results, null, null,
        null, null, null, null);
  }

  public DemoSummary withProcesses(Map<String, Object> processes) {
    return new DemoSummary(nodes, upgraded, failed, rolledBack, notStarted, version, wallSeconds, startupSeconds,
        results, processes, temporal, uiUrl, capiVersion, machinesReplaced, hookCalls);
  }

  /** With the Temporal server's version and (null: none, or it did not answer) its Web UI's URL. */
  public DemoSummary withTemporal(String temporal, String uiUrl) {
    return new DemoSummary(nodes, upgraded, failed, rolledBack, notStarted, version, wallSeconds, startupSeconds,
        results, processes, temporal, uiUrl, capiVersion, machinesReplaced, hookCalls);
  }

  /** With what the real Cluster API showed ({@code --kube real}): its version, the Machines replaced, the hook calls. */
  public DemoSummary withCapi(String capiVersion, int machinesReplaced, Map<String, Long> hookCalls) {
    return new DemoSummary(nodes, upgraded, failed, rolledBack, notStarted, version, wallSeconds, startupSeconds,
        results, processes, temporal, uiUrl, capiVersion, machinesReplaced, hookCalls);
  }

  /** Every node upgraded, and (on real Cluster API) no Machine replaced. */
  public boolean allUpgraded() {
    return upgraded == nodes && (machinesReplaced == null || machinesReplaced == 0);
  }
}
