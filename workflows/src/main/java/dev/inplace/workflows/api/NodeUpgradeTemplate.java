package dev.inplace.workflows.api;

import java.util.List;

/**
 * Everything a parent run gives each of its NodeUpgrade children except the node itself: frozen
 * when the parent starts.
 */
public record NodeUpgradeTemplate(
    Distribution distribution,
    String targetVersion,
    List<Artifact> artifacts,
    HostProfile profile,
    SshSettings ssh,
    DrainOptions drain,
    long readyTimeoutSeconds,
    long minFreeBytes,
    String arch) {
  public NodeUpgradeTemplate {
    artifacts = artifacts == null ? null : List.copyOf(artifacts);
  }

  /** The child request for one node (validates everything). */
  public NodeUpgradeRequest forNode(NodeTarget node) {
    return new NodeUpgradeRequest(
        node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch);
  }
}
