package dev.inplace.client;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The static summary (one line) and details (a few Markdown lines) a run is started with, shown by
 * the Temporal UI and {@code temporal workflow describe}. Built from the request alone: names,
 * versions and settings, never a Secret's content (only its name).
 */
public final class RunDescriptions {
  private RunDescriptions() {}

  /** A run's summary and details; {@code origin} says who started it (e.g. "ControlPlaneUpgrade fleet/to-1-31"). */
  public record Description(String summary, String details) {}

  public static Description controlPlane(ControlPlaneUpgradeRequest r, String origin) {
    String summary = "Upgrade the control plane of " + r.cluster() + " to " + r.template().targetVersion()
        + (origin == null ? "" : " (" + origin + ")");
    List<String> lines = new ArrayList<>();
    lines.add("**ControlPlaneUpgrade** of cluster `" + r.cluster() + "` to `" + r.template().targetVersion() + "`");
    lines.add("- order: one control-plane node at a time, after an etcd snapshot; health gate between nodes");
    template(lines, r.template());
    pacing(lines, r.soakSeconds(), r.window());
    origin(lines, origin);
    return new Description(summary, String.join("\n", lines));
  }

  public static Description workers(WorkersUpgradeRequest r, String origin) {
    String summary = "Upgrade workers of " + r.machineDeployment() + " in " + r.cluster() + " to "
        + r.template().targetVersion() + (origin == null ? "" : " (" + origin + ")");
    List<String> lines = new ArrayList<>();
    lines.add("**WorkersUpgrade** of MachineDeployment `" + r.machineDeployment() + "` in cluster `" + r.cluster()
        + "` to `" + r.template().targetVersion() + "`");
    lines.add("- window: maxUnavailable " + r.maxUnavailable() + "; on failure " + r.onFailure()
        + (r.maxFailures() > 0 ? " (max " + r.maxFailures() + " failures)" : ""));
    template(lines, r.template());
    pacing(lines, r.soakSeconds(), r.window());
    origin(lines, origin);
    return new Description(summary, String.join("\n", lines));
  }

  public static Description node(NodeUpgradeRequest r, String origin) {
    String summary = "Upgrade " + r.node().nodeName() + " (" + r.node().machineName() + ") to " + r.targetVersion()
        + (origin == null ? "" : " (" + origin + ")");
    List<String> lines = new ArrayList<>();
    lines.add("**NodeUpgrade** of node `" + r.node().nodeName() + "` (Machine `" + r.node().machineName() + "`, "
        + r.node().role() + ") in cluster `" + r.node().cluster() + "` to `" + r.targetVersion() + "`");
    lines.add("- host: " + r.node().address() + " (" + r.distribution().name().toLowerCase(java.util.Locale.ROOT) + ", "
        + r.arch() + ")");
    lines.add("- artifacts: " + artifacts(r.artifacts()));
    lines.add("- drain: " + drain(r.drain()));
    lines.add("- ready timeout: " + r.readyTimeoutSeconds() + " s");
    origin(lines, origin);
    return new Description(summary, String.join("\n", lines));
  }

  private static void template(List<String> lines, NodeUpgradeTemplate t) {
    lines.add("- distribution: " + t.distribution().name().toLowerCase(java.util.Locale.ROOT) + ", " + t.arch());
    lines.add("- artifacts: " + artifacts(t.artifacts()));
    lines.add("- drain: " + drain(t.drain()) + "; ready timeout " + t.readyTimeoutSeconds() + " s");
  }

  private static void pacing(List<String> lines, long soakSeconds, MaintenanceWindow window) {
    lines.add("- soak: " + soakSeconds + " s; maintenance window: " + (window == null ? "none"
        : (window.days().isEmpty() ? "every day" : String.join(",", window.days())) + " " + window.start() + "-"
            + window.end() + " " + window.timeZone()));
  }

  private static void origin(List<String> lines, String origin) {
    if (origin != null) {
      lines.add("- started by: " + origin);
    }
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
