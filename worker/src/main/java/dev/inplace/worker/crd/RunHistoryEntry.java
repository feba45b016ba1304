package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/**
 * One run of the CR that has ended, as {@code inplace history} lists it. The list is bounded
 * ({@link #MAX}): the oldest entries go first.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class RunHistoryEntry {
  /** How many ended runs a CR keeps in status.history. */
  public static final int MAX = 20;

  private String workflowId;

  @JsonPropertyDescription("The MachineDeployment of a WorkersUpgrade run.")
  private String machineDeployment;

  @JsonPropertyDescription("The version the nodes ran when the run started (control plane: its spec.version; workers: the MachineDeployment's).")
  private String fromVersion;

  @JsonPropertyDescription("The target version.")
  private String toVersion;

  @JsonPropertyDescription("RFC 3339 time the run started.")
  private String started;

  @JsonPropertyDescription("RFC 3339 time the run ended.")
  private String finished;

  @JsonPropertyDescription("How the run ended: Succeeded, Failed or Aborted.")
  private String result;

  @JsonPropertyDescription("Failure type when the run failed.")
  private String reason;

  private String message;

  @JsonPropertyDescription("Nodes in the run.")
  private int total;

  private int upgraded;
  private int failed;
  private int skipped;

  /**
   * {@code history} with {@code entry} appended unless an entry of that workflow ID is there
   * already; at most {@link #MAX} entries, the newest kept.
   */
  public static List<RunHistoryEntry> append(List<RunHistoryEntry> history, RunHistoryEntry entry) {
    List<RunHistoryEntry> next = new ArrayList<>(history == null ? List.of() : history);
    if (next.stream().anyMatch(e -> entry.getWorkflowId().equals(e.getWorkflowId()))) {
      return next;
    }
    next.add(entry);
    return next.size() <= MAX ? next : new ArrayList<>(next.subList(next.size() - MAX, next.size()));
  }

  public String getWorkflowId() {
    return workflowId;
  }

  public RunHistoryEntry setWorkflowId(String workflowId) {
    this.workflowId = workflowId;
    return this;
  }

  public String getMachineDeployment() {
    return machineDeployment;
  }

  public RunHistoryEntry setMachineDeployment(String machineDeployment) {
    this.machineDeployment = machineDeployment;
    return this;
  }

  public String getFromVersion() {
    return fromVersion;
  }

  public RunHistoryEntry setFromVersion(String fromVersion) {
    this.fromVersion = fromVersion;
    return this;
  }

  public String getToVersion() {
    return toVersion;
  }

  public RunHistoryEntry setToVersion(String toVersion) {
    this.toVersion = toVersion;
    return this;
  }

  public String getStarted() {
    return started;
  }

  public RunHistoryEntry setStarted(String started) {
    this.started = started;
    return this;
  }

  public String getFinished() {
    return finished;
  }

  public RunHistoryEntry setFinished(String finished) {
    this.finished = finished;
    return this;
  }

  public String getResult() {
    return result;
  }

  public RunHistoryEntry setResult(String result) {
    this.result = result;
    return this;
  }

  public String getReason() {
    return reason;
  }

  public RunHistoryEntry setReason(String reason) {
    this.reason = reason;
    return this;
  }

  public String getMessage() {
    return message;
  }

  public RunHistoryEntry setMessage(String message) {
    this.message = message;
    return this;
  }

  public int getTotal() {
    return total;
  }

  public RunHistoryEntry setTotal(int total) {
    this.total = total;
    return this;
  }

  public int getUpgraded() {
    return upgraded;
  }

  public RunHistoryEntry setUpgraded(int upgraded) {
    this.upgraded = upgraded;
    return this;
  }

  public int getFailed() {
    return failed;
  }

  public RunHistoryEntry setFailed(int failed) {
    this.failed = failed;
    return this;
  }

  public int getSkipped() {
    return skipped;
  }

  public RunHistoryEntry setSkipped(int skipped) {
    this.skipped = skipped;
    return this;
  }
}
