package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * The static summary (one line) and details (a few Markdown lines) of a NodeUpgrade child, as the
 * Temporal UI and {@code temporal workflow describe} show them: node, Machine, cluster, the version
 * before and after, the pool (or the control plane) and the parent run. A pure function of the
 * child's request and the Machine the parent froze, so the same run always describes a child the
 * same way. Names and versions only: no Secret content (the request holds none).
 */
record ChildRunDescription(String summary, String details) {

  /**
   * @param parentType the parent's kind ({@code WorkersUpgrade}, {@code ControlPlaneUpgrade})
   * @param parentId the parent's workflow ID
   */
  static ChildRunDescription of(MachineInfo machine, NodeUpgradeRequest request, String parentType, String parentId) {
    String from = from(machine);
    String where = machine.role() == NodeRole.CONTROL_PLANE ? "control plane" : "pool " + machine.pool();
    String summary = "Upgrade " + machine.nodeName() + " (" + machine.name() + ") " + from + " -> "
        + request.targetVersion() + ", " + where;
    List<String> lines = new ArrayList<>();
    lines.add("**NodeUpgrade** of node `" + machine.nodeName() + "` (Machine `" + machine.name() + "`, "
        + machine.role() + ") in cluster `" + request.node().cluster() + "` from `" + from + "` to `"
        + request.targetVersion() + "`");
    lines.add(machine.role() == NodeRole.CONTROL_PLANE
        ? "- control plane: one node at a time, behind the health gate"
        : "- pool: MachineDeployment `" + machine.pool() + "`");
    lines.add("- before: Machine `" + orUnknown(machine.version()) + "`, Node reports `"
        + orUnknown(machine.kubeletVersion()) + "`");
    lines.add("- host: " + request.node().address() + " (" + request.distribution().name().toLowerCase(Locale.ROOT)
        + ", " + request.arch() + ")");
    lines.add("- artifacts: " + artifacts(request.artifacts()));
    lines.add("- drain: " + drain(request.drain()) + "; ready timeout " + request.readyTimeoutSeconds() + " s");
    lines.add("- started by: " + parentType + " `" + parentId + "`");
    return new ChildRunDescription(summary, String.join("\n", lines));
  }

  /** The version the node runs before: its Machine's, else what its Node reports. */
  private static String from(MachineInfo m) {
    if (m.version() != null && !m.version().isBlank()) {
      return m.version();
    }
    return orUnknown(m.kubeletVersion());
  }

  private static String orUnknown(String version) {
    return version == null || version.isBlank() ? "unknown" : version;
  }

  private static String artifacts(List<Artifact> artifacts) {
    return artifacts.stream().map(a -> (a.name() + " " + mib(a.sizeBytes())).strip()).collect(Collectors.joining(", "));
  }

  private static String mib(long bytes) {
    return bytes <= 0 ? "" : (bytes + (1 << 20) - 1) / (1 << 20) + " MiB";
  }

  private static String drain(DrainOptions d) {
    if (d.skip()) {
      return "skipped (cordon only)";
    }
    return "timeout " + d.timeoutSeconds() + " s, PDB blocked: " + d.onBlocked();
  }
}
