package dev.inplace.workflows.api;

import java.util.List;

/**
 * Everything one node's upgrade needs, frozen when the run starts. Carries references to Secrets,
 * never their contents.
 *
 * @param node the Machine/Node and its host address
 * @param distribution k3s or kubeadm
 * @param targetVersion the version every artifact belongs to, for example {@code v1.31.2+k3s1}
 * @param artifacts the release's files, resolved from the catalogue with their digests
 * @param profile where things live on the host
 * @param ssh how to reach the host
 * @param drain drain settings
 * @param readyTimeoutSeconds how long the node may take to report Ready at the target version
 * @param minFreeBytes extra free space to require on the staging filesystem beyond the artifacts
 * @param arch the architecture the artifacts are built for ({@code amd64}, {@code arm64})
 * @param firstControlPlane set by ControlPlaneUpgrade on the control-plane node that upgrades the
 *     cluster's control plane for distributions with an upgrade command ({@code kubeadm upgrade
 *     apply}); false everywhere else, and in requests of runs started before the field existed
 * @param markMachine the run marks its own Machine (skip-remediation) for its duration: set when no
 *     parent run does it (the CAPI runtime extension starts NodeUpgrade directly); false in
 *     children of a parent run, and in requests of runs started before the field existed
 * @param awaitPermit after preflight, stage and backup, the run waits for its parent's {@code permit}
 *     signal before it cordons, and looks at its Node again when the permit comes: set by a parent
 *     run that prepares nodes ahead of its window (from change {@code parent-prepares-ahead} on);
 *     false for runs started directly, and in requests of runs started before the field existed
 * @param reportStaged once its artifacts are staged, the run signals its parent run {@link
 *     ChildReports#nodeStaged}: set by a parent that prepares nodes ahead (from change {@code
 *     parent-prepares-after-staged} on) on the nodes that start with their turn, so it prepares
 *     the next nodes only once these have staged; false everywhere else, and in requests of runs
 *     started before the field existed
 * @param reportEnd when it ends, whatever the outcome, the run signals its parent's workflow (the
 *     parent's current run, not the one that started it) {@code nodeEnded} with its outcome: set by
 *     a WorkersUpgrade run that hands its children over at continue-as-new (from change {@code
 *     workers-hand-over-children} on), since the run that follows a child may not be the one that
 *     started it; false everywhere else, and in requests of runs started before the field existed
 */
public record NodeUpgradeRequest(
    NodeTarget node,
    Distribution distribution,
    String targetVersion,
    List<Artifact> artifacts,
    HostProfile profile,
    SshSettings ssh,
    DrainOptions drain,
    long readyTimeoutSeconds,
    long minFreeBytes,
    String arch,
    boolean firstControlPlane,
    boolean markMachine,
    boolean awaitPermit,
    boolean reportStaged,
    boolean reportEnd) {

  /** A request that does not wait for a permit. */
  public NodeUpgradeRequest(
      NodeTarget node,
      Distribution distribution,
      String targetVersion,
      List<Artifact> artifacts,
      HostProfile profile,
      SshSettings ssh,
      DrainOptions drain,
      long readyTimeoutSeconds,
      long minFreeBytes,
      String arch,
      boolean firstControlPlane,
      boolean markMachine) {
    this(node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        firstControlPlane, markMachine, false, false, false);
  }

  /** A request whose Machine is marked by its parent run. */
  public NodeUpgradeRequest(
      NodeTarget node,
      Distribution distribution,
      String targetVersion,
      List<Artifact> artifacts,
      HostProfile profile,
      SshSettings ssh,
      DrainOptions drain,
      long readyTimeoutSeconds,
      long minFreeBytes,
      String arch,
      boolean firstControlPlane) {
    this(node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        firstControlPlane, false);
  }

  /** A request for any node but the first control plane. */
  public NodeUpgradeRequest(
      NodeTarget node,
      Distribution distribution,
      String targetVersion,
      List<Artifact> artifacts,
      HostProfile profile,
      SshSettings ssh,
      DrainOptions drain,
      long readyTimeoutSeconds,
      long minFreeBytes,
      String arch) {
    this(node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        false);
  }

  public NodeUpgradeRequest {
    if (node == null || distribution == null || profile == null || ssh == null) {
      throw new IllegalArgumentException("node, distribution, profile and ssh are required");
    }
    KubeVersion.parse(targetVersion);
    if (artifacts == null || artifacts.isEmpty()) {
      throw new IllegalArgumentException("at least one artifact is required");
    }
    artifacts = List.copyOf(artifacts);
    if (artifacts.stream().map(Artifact::name).distinct().count() != artifacts.size()) {
      throw new IllegalArgumentException("artifact names must be unique");
    }
    if (drain == null) {
      drain = DrainOptions.defaults();
    }
    if (readyTimeoutSeconds < 1) {
      throw new IllegalArgumentException("readyTimeoutSeconds must be at least 1");
    }
    if (minFreeBytes < 0) {
      throw new IllegalArgumentException("minFreeBytes must be >= 0");
    }
    if (arch == null || !arch.matches("[a-z0-9_]+")) {
      throw new IllegalArgumentException("arch must be a name like amd64 or arm64, got " + arch);
    }
  }

  /** This request, marked as (or as not) the first control plane. */
  public NodeUpgradeRequest withFirstControlPlane(boolean first) {
    return new NodeUpgradeRequest(
        node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        first, markMachine, awaitPermit, reportStaged, reportEnd);
  }

  /** This request, with the run marking its own Machine (or not). */
  public NodeUpgradeRequest withMarkMachine(boolean mark) {
    return new NodeUpgradeRequest(
        node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        firstControlPlane, mark, awaitPermit, reportStaged, reportEnd);
  }

  /** This request, waiting (or not) for its parent's permit before it cordons. */
  public NodeUpgradeRequest withAwaitPermit(boolean await) {
    return new NodeUpgradeRequest(
        node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        firstControlPlane, markMachine, await, reportStaged, reportEnd);
  }

  /** This request, telling its parent (or not) once its artifacts are staged. */
  public NodeUpgradeRequest withReportStaged(boolean report) {
    return new NodeUpgradeRequest(
        node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        firstControlPlane, markMachine, awaitPermit, report, reportEnd);
  }

  /** This request, telling its parent's workflow (or not) how it ended. */
  public NodeUpgradeRequest withReportEnd(boolean report) {
    return new NodeUpgradeRequest(
        node, distribution, targetVersion, artifacts, profile, ssh, drain, readyTimeoutSeconds, minFreeBytes, arch,
        firstControlPlane, markMachine, awaitPermit, reportStaged, report);
  }

  public String serviceName() {
    return profile.serviceFor(node.role());
  }

  public HostAccess hostAccess() {
    return new HostAccess(
        node.cluster().namespace(), node.nodeName(), node.address(), ssh, node.cluster().name(), node.machineName());
  }
}
