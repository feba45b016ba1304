package dev.inplace.activities.host;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import java.util.List;

/**
 * The host scripts of one node's upgrade rendered by the same templates and renderer as {@link
 * HostActivitiesImpl}, for a dry-run plan: nothing is connected to or run. Backup and restore
 * take the digests of the files installed now, which only the preflight on the host reads; the
 * plan shows {@link #DIGEST_READ_AT_PREFLIGHT} in their place.
 */
public final class HostScriptPlan {
  public static final String DIGEST_READ_AT_PREFLIGHT = "<sha256 read at preflight>";

  private final HostDistribution distribution;
  private final HostScripts scripts;

  public HostScriptPlan(HostDistribution distribution) {
    this.distribution = distribution;
    this.scripts = new HostScripts(distribution);
  }

  /** The plan of {@code distribution}'s host steps ({@link HostDistribution#of}). */
  public static HostScriptPlan of(dev.inplace.workflows.api.Distribution distribution) {
    return new HostScriptPlan(HostDistribution.of(distribution));
  }

  /** Whether nodes run the distribution's own upgrade command between install and restart. */
  public boolean hasUpgradeCommand() {
    return distribution.hasUpgradeCommand();
  }

  /** How a script is run over SSH: the script text is its stdin. */
  public static String command(SshSettings ssh) {
    return ssh.needsSudo() ? "sudo -n bash -s" : "bash -s";
  }

  /** Where an artifact is uploaded (SFTP) before {@link #stageCommit} checks and renames it. */
  public static String uploadPath(HostProfile profile, Artifact artifact) {
    return HostScripts.partPath(profile, artifact);
  }

  public RemoteScript inspect(HostProfile profile, NodeRole role, List<Artifact> artifacts) {
    return scripts.inspect(profile, profile.serviceFor(role), artifacts);
  }

  public RemoteScript stagePrepare(HostProfile profile, List<Artifact> artifacts) {
    return scripts.stagePrepare(profile, artifacts);
  }

  /** The commit of one uploaded artifact, as the activity runs it after each upload. */
  public RemoteScript stageCommit(HostProfile profile, Artifact artifact) {
    return scripts.stageCommit(profile, List.of(artifact));
  }

  public RemoteScript backup(HostProfile profile, List<Artifact> artifacts) {
    return scripts.backup(profile, filesNow(artifacts));
  }

  public RemoteScript install(HostProfile profile, List<Artifact> artifacts) {
    return scripts.install(profile, artifacts);
  }

  public RemoteScript restart(HostProfile profile, NodeRole role) {
    return scripts.restart(profile.serviceFor(role));
  }

  public RemoteScript restore(HostProfile profile, List<Artifact> artifacts) {
    return scripts.restore(profile, filesNow(artifacts));
  }

  /**
   * The distribution's upgrade command ({@link #hasUpgradeCommand()}): on the control plane that
   * upgrades the cluster ({@code kubeadm upgrade apply}) or on any other node ({@code node}).
   */
  public RemoteScript upgrade(HostProfile profile, NodeRole role, String version, boolean firstControlPlane) {
    return scripts.upgrade(profile, role, version, firstControlPlane);
  }

  public RemoteScript etcdSnapshot(HostProfile profile, String name) {
    return scripts.etcdSnapshot(profile, name);
  }

  private static List<InstalledFile> filesNow(List<Artifact> artifacts) {
    return artifacts.stream()
        .map(a -> new InstalledFile(a.installPath(), DIGEST_READ_AT_PREFLIGHT))
        .toList();
  }
}
