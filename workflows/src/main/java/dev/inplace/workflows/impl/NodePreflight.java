package dev.inplace.workflows.impl;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostPaths;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * The node-level safety rules of DESIGN s.6, as a pure function of what preflight observed. Pure so
 * the workflow stays deterministic and the rules are unit-testable on their own.
 */
final class NodePreflight {

  private NodePreflight() {}

  /**
   * How a Node's reported kubelet version is held against the release: {@link #EXACT} (NodeUpgrade
   * runs before node-upgrade-k0s-node-version, parent runs before parent-k0s-node-version), or
   * {@link #AS_REPORTED}, where a k0s Node's {@code vX.Y.Z+k0s} runs every {@code vX.Y.Z+k0s.N}
   * ({@link KubeVersion#nodeRuns}); the installed digests (NodeUpgrade) or the Machine's
   * spec.version (parents) then tell the builds apart.
   */
  enum VersionMatch {
    EXACT,
    AS_REPORTED;

    boolean runs(String nodeVersion, String release) {
      return this == EXACT ? release.equals(nodeVersion) : KubeVersion.nodeRuns(nodeVersion, release);
    }

    /** Whether a Machine is done at the release: its Node runs it and its Machine records it. */
    boolean machineAt(MachineInfo m, String nodeVersion, String release) {
      return this == EXACT
          ? release.equals(nodeVersion) && release.equals(m.version())
          : KubeVersion.machineAt(m.version(), nodeVersion, release);
    }
  }

  /** The refusal for this node, if any, comparing versions exactly. */
  static Optional<ApplicationFailure> refusal(
      NodeUpgradeRequest request, NodeState node, HostFacts host) {
    return refusal(request, node, host, VersionMatch.EXACT);
  }

  /** The refusal for this node, if any. Nothing has been changed when this is called. */
  static Optional<ApplicationFailure> refusal(
      NodeUpgradeRequest request, NodeState node, HostFacts host, VersionMatch match) {
    KubeVersion target = KubeVersion.parse(request.targetVersion());
    String nodeName = request.node().nodeName();
    if (atTarget(request, node, host, match)) {
      return Optional.empty();
    }
    if (node.kubeletVersion() == null || !KubeVersion.isValid(node.kubeletVersion())) {
      return refuse(
          UpgradeFailures.PREFLIGHT_FAILED,
          "node " + nodeName + " reports no valid kubelet version: " + node.kubeletVersion());
    }
    KubeVersion current = KubeVersion.parse(node.kubeletVersion());
    if (target.compareTo(current) < 0) {
      return refuse(
          UpgradeFailures.UNSUPPORTED_VERSION_SKEW,
          "refusing a downgrade of " + nodeName + " from " + current + " to " + target);
    }
    int minors = current.minorsTo(target);
    if (minors > 1) {
      return refuse(
          UpgradeFailures.UNSUPPORTED_VERSION_SKEW,
          "refusing to skip minor versions on "
              + nodeName
              + ": "
              + current
              + " to "
              + target
              + " is "
              + minors
              + " minors; upgrade one minor at a time");
    }
    if (!node.ready()) {
      return refuse(UpgradeFailures.NODE_NOT_READY, "node " + nodeName + " is not Ready");
    }
    if (!Objects.equals(host.arch(), request.arch())) {
      return refuse(
          UpgradeFailures.ARCHITECTURE_MISMATCH,
          "host of "
              + nodeName
              + " is "
              + host.arch()
              + " but the artifacts are built for "
              + request.arch());
    }
    long needed = request.minFreeBytes() + bytesToStage(request.artifacts(), host.installed());
    if (host.stagingFreeBytes() < needed) {
      return refuse(
          UpgradeFailures.INSUFFICIENT_DISK,
          "host of "
              + nodeName
              + " has "
              + host.stagingFreeBytes()
              + " bytes free in "
              + request.profile().stagingDir()
              + ", needs "
              + needed);
    }
    return Optional.empty();
  }

  /**
   * For a run that waited for its parent's permit after preflight: the Node as it is now must be
   * the one preflight judged (the same kubelet version) and must still pass every rule (Ready, ...).
   * The host's facts are preflight's: nothing but this run changes the files it looked at.
   */
  static Optional<ApplicationFailure> changedWhileWaiting(
      NodeUpgradeRequest request, NodeState before, NodeState now, HostFacts host, VersionMatch match) {
    if (!Objects.equals(before.kubeletVersion(), now.kubeletVersion())) {
      return refuse(
          UpgradeFailures.PREFLIGHT_FAILED,
          "node " + request.node().nodeName() + " reports kubelet " + now.kubeletVersion() + " but preflight saw "
              + before.kubeletVersion() + "; run it again to look afresh");
    }
    return refusal(request, now, host, match);
  }

  /**
   * The catalogue rules ({@link ArtifactRules}: https or a local mirror file, install paths in the
   * distribution's layout) and the host profile's allowlist ({@link HostPaths}), checked again here
   * because a run started by hand skips the intake.
   */
  static Optional<ApplicationFailure> catalogueRefusal(NodeUpgradeRequest request) {
    return ArtifactRules.problem(request.artifacts(), request.distribution(),
            request.profile() == null ? null : request.profile().os())
        .flatMap(why -> refuse(UpgradeFailures.INVALID_REQUEST, "refusing the release of " + request.targetVersion()
            + " for " + request.node().nodeName() + ": " + why))
        .or(() -> HostPaths.problem(request.distribution(), request.profile())
            .flatMap(why -> refuse(UpgradeFailures.INVALID_REQUEST, "refusing the host profile of "
                + request.node().nodeName() + ": " + why)));
  }

  /**
   * A kubelet must never be newer than the apiserver (version-skew policy): refuses a worker whose
   * target is newer than any control-plane node's kubelet. A control plane's kubelet is upgraded
   * after its apiserver, so it is a lower bound of that apiserver. Control planes with no valid
   * version are ignored; none at all means nothing to compare with.
   */
  static Optional<ApplicationFailure> kubeletNewerThanControlPlane(
      NodeUpgradeRequest request, NodeState node, HostFacts host, NodeVersions controlPlane) {
    return kubeletNewerThanControlPlane(request, node, host, controlPlane, VersionMatch.EXACT);
  }

  /**
   * As above; with {@link VersionMatch#AS_REPORTED} a control plane whose Node runs the target
   * (a k0s {@code +k0s} for {@code +k0s.N}) is not behind it.
   */
  static Optional<ApplicationFailure> kubeletNewerThanControlPlane(
      NodeUpgradeRequest request, NodeState node, HostFacts host, NodeVersions controlPlane, VersionMatch match) {
    if (atTarget(request, node, host, match) || controlPlane == null || controlPlane.nodes() == null) {
      return Optional.empty();
    }
    KubeVersion target = KubeVersion.parse(request.targetVersion());
    List<String> behind =
        controlPlane.nodes().stream()
            .filter(n -> KubeVersion.isValid(n.kubeletVersion()))
            .filter(n -> !match.runs(n.kubeletVersion(), request.targetVersion()))
            .filter(n -> KubeVersion.parse(n.kubeletVersion()).compareTo(target) < 0)
            .map(n -> n.nodeName() + " runs " + n.kubeletVersion())
            .toList();
    if (behind.isEmpty()) {
      return Optional.empty();
    }
    return refuse(
        UpgradeFailures.UNSUPPORTED_VERSION_SKEW,
        "refusing to upgrade worker "
            + request.node().nodeName()
            + " to "
            + target
            + ": its kubelet would be newer than the control plane ("
            + ClusterPreflight.list(behind)
            + "); upgrade the control plane first");
  }

  /** The node already runs the target, comparing versions exactly. */
  static boolean atTarget(NodeUpgradeRequest request, NodeState node, HostFacts host) {
    return atTarget(request, node, host, VersionMatch.EXACT);
  }

  /** The node already runs the target: Ready at the version, every artifact installed. */
  static boolean atTarget(NodeUpgradeRequest request, NodeState node, HostFacts host, VersionMatch match) {
    return node.ready()
        && match.runs(node.kubeletVersion(), request.targetVersion())
        && request.artifacts().stream()
            .allMatch(a -> a.sha256().equals(installedDigest(host.installed(), a.installPath())));
  }

  /** Files as they are before the run, minus those already holding this run's artifact. */
  static List<InstalledFile> filesToKeep(List<Artifact> artifacts, List<InstalledFile> installed) {
    return installed.stream()
        .filter(
            f ->
                artifacts.stream()
                    .noneMatch(
                        a ->
                            a.installPath().equals(f.path()) && a.sha256().equals(f.sha256())))
        .toList();
  }

  static String installedDigest(List<InstalledFile> installed, String path) {
    return installed.stream()
        .filter(f -> f.path().equals(path))
        .map(InstalledFile::sha256)
        .filter(Objects::nonNull)
        .findFirst()
        .orElse(null);
  }

  private static long bytesToStage(List<Artifact> artifacts, List<InstalledFile> installed) {
    return artifacts.stream()
        .filter(a -> !a.sha256().equals(installedDigest(installed, a.installPath())))
        .mapToLong(Artifact::sizeBytes)
        .sum();
  }

  private static Optional<ApplicationFailure> refuse(String type, String message) {
    return Optional.of(UpgradeFailures.nonRetryable(type, message));
  }
}
