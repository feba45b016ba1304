package dev.inplace.activities.host;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import java.util.List;

/** Turns request data into rendered scripts: the one place that knows each template's values. */
final class HostScripts {
  /** systemd checks after a restart, and the pause between them. */
  static final int ACTIVE_CHECKS = 5;

  static final int CHECK_INTERVAL_SECONDS = 2;

  static final String ABSENT = "absent";

  private final ScriptRenderer renderer;
  private final HostDistribution distribution;

  HostScripts(HostDistribution distribution) {
    this.distribution = distribution;
    this.renderer = new ScriptRenderer(distribution.scriptFolder());
  }

  RemoteScript inspect(HostProfile profile, String service, List<Artifact> artifacts) {
    return renderer.render(
        "inspect",
        new ScriptValues()
            .with("staging_dir", profile.stagingDir())
            .with("bin_dir", profile.binDir())
            .with("version_binary", distribution.versionBinary())
            .with("service", service)
            .withRows(
                "install_paths", artifacts.stream().map(a -> List.of(a.installPath())).toList()));
  }

  RemoteScript stagePrepare(HostProfile profile, List<Artifact> artifacts) {
    return renderer.render(
        "stage-prepare",
        new ScriptValues()
            .with("staging_dir", profile.stagingDir())
            .withRows(
                "artifacts",
                artifacts.stream()
                    .map(a -> List.of(a.name(), a.stagedFileName(), a.sha256(), a.installPath()))
                    .toList()));
  }

  RemoteScript stageCommit(HostProfile profile, List<Artifact> artifacts) {
    return renderer.render(
        "stage-commit",
        new ScriptValues()
            .with("staging_dir", profile.stagingDir())
            .withRows(
                "artifacts",
                artifacts.stream()
                    .map(a -> List.of(a.name(), a.stagedFileName(), a.sha256()))
                    .toList()));
  }

  RemoteScript backup(HostProfile profile, List<InstalledFile> existing) {
    return renderer.render(
        "backup",
        new ScriptValues()
            .with("backup_dir", profile.backupDir())
            .withRows("files", existing.stream().map(f -> List.of(f.path(), f.sha256())).toList()));
  }

  RemoteScript install(HostProfile profile, List<Artifact> artifacts) {
    return renderer.render(
        "install",
        new ScriptValues()
            .with("staging_dir", profile.stagingDir())
            .withRows(
                "artifacts",
                artifacts.stream()
                    .map(
                        a ->
                            List.of(
                                a.name(),
                                a.stagedFileName(),
                                a.sha256(),
                                a.installPath(),
                                a.mode()))
                    .toList()));
  }

  RemoteScript restart(String service) {
    return renderer.render(
        "restart",
        new ScriptValues()
            .with("service", service)
            .with("active_checks", Integer.toString(ACTIVE_CHECKS))
            .with("check_interval_seconds", Integer.toString(CHECK_INTERVAL_SECONDS)));
  }

  RemoteScript restore(HostProfile profile, List<InstalledFile> previous) {
    return renderer.render(
        "restore",
        new ScriptValues()
            .with("backup_dir", profile.backupDir())
            .withRows(
                "files",
                previous.stream()
                    .map(f -> List.of(f.path(), f.sha256() == null ? ABSENT : f.sha256()))
                    .toList()));
  }

  /**
   * Requires a distribution with an etcd snapshot dir ({@link HostDistribution#etcdSnapshotDir}).
   */
  RemoteScript etcdSnapshot(HostProfile profile, String name) {
    return renderer.render(
        "etcd-snapshot",
        new ScriptValues()
            .with("bin_dir", profile.binDir())
            .with("binary", distribution.versionBinary())
            .with("snapshot_dir", distribution.etcdSnapshotDir())
            .with("name", name));
  }

  /** Staged files are uploaded under this name and renamed once their digest checks out. */
  static String partPath(HostProfile profile, Artifact artifact) {
    return profile.stagingDir() + "/." + artifact.stagedFileName() + ".part";
  }
}
