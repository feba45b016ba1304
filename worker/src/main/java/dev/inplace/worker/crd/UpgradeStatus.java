package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/** The status both kinds share, written by the watcher through the status subresource. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class UpgradeStatus {
  @JsonPropertyDescription("The metadata.generation the watcher last acted on.")
  private Long observedGeneration;

  private UpgradePhase phase;

  @JsonPropertyDescription("One line on where the upgrade stands.")
  private String message;

  private List<UpgradeCondition> conditions = new ArrayList<>();

  @JsonPropertyDescription("Every node of the run(s), with its phase and current or failed step.")
  private List<NodeRecord> nodes;

  private UpgradeCounts counts;

  @JsonPropertyDescription("upgraded/total, e.g. 3/9.")
  private String progress;

  @JsonPropertyDescription("IDs of the workflow runs started for this CR (one per MachineDeployment for a WorkersUpgrade).")
  private List<String> workflowIds;

  @JsonPropertyDescription("Each run's own phase.")
  private List<RunRecord> runs;

  @JsonPropertyDescription("The runs of this resource that have ended, oldest first; at most the last 20 (inplace history).")
  private List<RunHistoryEntry> history;

  @JsonPropertyDescription("Name of the etcd snapshot taken before the first control-plane node changed.")
  private String etcdSnapshot;

  @JsonPropertyDescription("The plan of a dryRun.")
  private UpgradePlan plan;

  @JsonPropertyDescription("The metadata.generation whose spec the run was started with (the frozen target).")
  private Long frozenGeneration;

  @JsonPropertyDescription("sha256 of the frozen spec without paused: a different spec is refused.")
  private String specHash;

  @JsonPropertyDescription("RFC 3339 time the run(s) started.")
  private String startTime;

  @JsonPropertyDescription("RFC 3339 time the last run ended.")
  private String completionTime;

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public UpgradeStatus setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
    return this;
  }

  public UpgradePhase getPhase() {
    return phase;
  }

  public UpgradeStatus setPhase(UpgradePhase phase) {
    this.phase = phase;
    return this;
  }

  public String getMessage() {
    return message;
  }

  public UpgradeStatus setMessage(String message) {
    this.message = message;
    return this;
  }

  public List<UpgradeCondition> getConditions() {
    return conditions;
  }

  public UpgradeStatus setConditions(List<UpgradeCondition> conditions) {
    this.conditions = conditions;
    return this;
  }

  public List<NodeRecord> getNodes() {
    return nodes;
  }

  public UpgradeStatus setNodes(List<NodeRecord> nodes) {
    this.nodes = nodes;
    return this;
  }

  public UpgradeCounts getCounts() {
    return counts;
  }

  public UpgradeStatus setCounts(UpgradeCounts counts) {
    this.counts = counts;
    return this;
  }

  public String getProgress() {
    return progress;
  }

  public UpgradeStatus setProgress(String progress) {
    this.progress = progress;
    return this;
  }

  public List<String> getWorkflowIds() {
    return workflowIds;
  }

  public UpgradeStatus setWorkflowIds(List<String> workflowIds) {
    this.workflowIds = workflowIds;
    return this;
  }

  public List<RunRecord> getRuns() {
    return runs;
  }

  public UpgradeStatus setRuns(List<RunRecord> runs) {
    this.runs = runs;
    return this;
  }

  public List<RunHistoryEntry> getHistory() {
    return history;
  }

  public UpgradeStatus setHistory(List<RunHistoryEntry> history) {
    this.history = history;
    return this;
  }

  public String getEtcdSnapshot() {
    return etcdSnapshot;
  }

  public UpgradeStatus setEtcdSnapshot(String etcdSnapshot) {
    this.etcdSnapshot = etcdSnapshot;
    return this;
  }

  public UpgradePlan getPlan() {
    return plan;
  }

  public UpgradeStatus setPlan(UpgradePlan plan) {
    this.plan = plan;
    return this;
  }

  public Long getFrozenGeneration() {
    return frozenGeneration;
  }

  public UpgradeStatus setFrozenGeneration(Long frozenGeneration) {
    this.frozenGeneration = frozenGeneration;
    return this;
  }

  public String getSpecHash() {
    return specHash;
  }

  public UpgradeStatus setSpecHash(String specHash) {
    this.specHash = specHash;
    return this;
  }

  public String getStartTime() {
    return startTime;
  }

  public UpgradeStatus setStartTime(String startTime) {
    this.startTime = startTime;
    return this;
  }

  public String getCompletionTime() {
    return completionTime;
  }

  public UpgradeStatus setCompletionTime(String completionTime) {
    this.completionTime = completionTime;
    return this;
  }

  /** The condition of that type, if set. */
  public Optional<UpgradeCondition> condition(String type) {
    return conditions == null
        ? Optional.empty()
        : conditions.stream().filter(c -> type.equals(c.getType())).findFirst();
  }

  /** Whether runs were started for the CR (its spec is frozen). */
  public boolean started() {
    return workflowIds != null && !workflowIds.isEmpty();
  }
}
