package dev.inplace.worker.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyDescription;
import java.util.ArrayList;
import java.util.List;

/**
 * What a run would do (dryRun): the nodes in the order they would start, each with its steps, and
 * the scripts those steps run on the hosts, rendered exactly as the activities render them.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class UpgradePlan {
  private String summary;

  @JsonPropertyDescription("Nodes in start order; nodes of one wave may run at once.")
  private List<PlannedNode> nodes = new ArrayList<>();

  @JsonPropertyDescription("When the maintenance window next opens (ISO-8601), or now; absent without a window.")
  private String windowOpensAt;

  @JsonPropertyDescription("Preflight findings: an Error means the run would refuse.")
  private List<PlannedFinding> findings = new ArrayList<>();

  @JsonPropertyDescription("The remote scripts the steps name, each fed to the command on stdin.")
  private List<PlannedScript> scripts = new ArrayList<>();

  public String getSummary() {
    return summary;
  }

  public UpgradePlan setSummary(String summary) {
    this.summary = summary;
    return this;
  }

  public List<PlannedNode> getNodes() {
    return nodes;
  }

  public UpgradePlan setNodes(List<PlannedNode> nodes) {
    this.nodes = nodes;
    return this;
  }

  public String getWindowOpensAt() {
    return windowOpensAt;
  }

  public UpgradePlan setWindowOpensAt(String windowOpensAt) {
    this.windowOpensAt = windowOpensAt;
    return this;
  }

  public List<PlannedFinding> getFindings() {
    return findings;
  }

  public UpgradePlan setFindings(List<PlannedFinding> findings) {
    this.findings = findings;
    return this;
  }

  public List<PlannedScript> getScripts() {
    return scripts;
  }

  public UpgradePlan setScripts(List<PlannedScript> scripts) {
    this.scripts = scripts;
    return this;
  }
}
