package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import io.temporal.activity.ActivityOptions;
import java.util.stream.Collectors;

/**
 * The one-line summary each activity call of a NodeUpgrade run carries into the Temporal UI, so a
 * reader sees {@code stage k3s 64 MiB, k3s-airgap-images 8 MiB -> worker-a-1} instead of a bare
 * {@code StageArtifacts}. Pure text from the request: no secrets (the request holds none).
 */
final class NodeActivitySummaries {
  private NodeActivitySummaries() {}

  /** The options with a UI summary, when the run's version carries summaries. */
  static ActivityOptions summarized(boolean enabled, ActivityOptions options, String summary) {
    return enabled ? ActivityOptions.newBuilder(options).setSummary(summary).build() : options;
  }

  static String inspectNode(NodeUpgradeRequest r) {
    return "inspect Node " + r.node().nodeName();
  }

  static String inspectNodeAgain(NodeUpgradeRequest r) {
    return "inspect Node " + r.node().nodeName() + " again: its turn came";
  }

  static String confirmHostAccess(NodeUpgradeRequest r) {
    return "confirm host " + r.node().nodeName() + " (" + r.node().address() + ") against Machine "
        + r.node().machineName();
  }

  static String inspectHost(NodeUpgradeRequest r) {
    return "inspect host " + r.node().nodeName() + " (" + r.node().address() + ")";
  }

  static String controlPlaneVersions(NodeUpgradeRequest r) {
    return "read control-plane kubelet versions of " + r.node().cluster();
  }

  static String stage(NodeUpgradeRequest r) {
    return "stage " + r.artifacts().stream().map(NodeActivitySummaries::sized).collect(Collectors.joining(", "))
        + " -> " + r.node().nodeName();
  }

  static String cordon(NodeUpgradeRequest r) {
    return "cordon " + r.node().nodeName();
  }

  static String drain(NodeUpgradeRequest r) {
    return "drain " + r.node().nodeName() + " (up to " + r.drain().timeoutSeconds() + " s)";
  }

  static String backup(NodeUpgradeRequest r) {
    return "back up the binaries on " + r.node().nodeName();
  }

  static String install(NodeUpgradeRequest r) {
    return "install " + r.artifacts().stream().map(Artifact::name).collect(Collectors.joining(", "))
        + " " + r.targetVersion() + " on " + r.node().nodeName();
  }

  static String upgradeCommand(NodeUpgradeRequest r) {
    return (r.firstControlPlane() ? "kubeadm upgrade apply " + r.targetVersion() : "kubeadm upgrade node")
        + " on " + r.node().nodeName();
  }

  static String restart(NodeUpgradeRequest r) {
    return "restart " + r.serviceName() + " on " + r.node().nodeName();
  }

  static String awaitVersion(NodeUpgradeRequest r, String version) {
    return "wait for " + r.node().nodeName() + " Ready at " + version;
  }

  static String uncordon(NodeUpgradeRequest r) {
    return "uncordon " + r.node().nodeName();
  }

  static String record(NodeUpgradeRequest r) {
    return "record " + r.targetVersion() + " on Machine " + r.node().machineName();
  }

  static String restore(NodeUpgradeRequest r) {
    return "restore the previous binaries on " + r.node().nodeName();
  }

  static String mark(NodeUpgradeRequest r, boolean upgrading) {
    return (upgrading ? "mark" : "unmark") + " Machine " + r.node().machineName() + " skip-remediation";
  }

  private static String sized(Artifact a) {
    return a.name() + " " + Math.max(1, a.sizeBytes() / (1024 * 1024)) + " MiB";
  }
}
