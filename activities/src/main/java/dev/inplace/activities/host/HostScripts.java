package dev.inplace.activities.host;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.NodeRole;
import java.util.List;

/** Turns request data into rendered scripts: the one place that knows each template's values. */
final class HostScripts {
  /** systemd checks after a restart, and the pause between them. */
  static final int ACTIVE_CHECKS = 5;

  static final int CHECK_INTERVAL_SECONDS = 2;

  static final String ABSENT = "absent";

  /** Templates of Kairos hosts, tried before the distribution's ({@code scripts/kairos/}). */
  static final String KAIROS_FOLDER = "kairos";

  private final ScriptRenderer renderer;
  private final ScriptRenderer kairos;
  private final HostDistribution distribution;

  HostScripts(HostDistribution distribution) {
    this.distribution = distribution;
    this.renderer = new ScriptRenderer(distribution.scriptFolder());
    this.kairos = new ScriptRenderer(List.of(KAIROS_FOLDER, distribution.scriptFolder()));
  }

  /** The templates for hosts of this profile: Kairos's own steps first on Kairos hosts. */
  private ScriptRenderer rendererFor(HostProfile profile) {
    return profile != null && profile.kairos() ? kairos : renderer;
  }

  RemoteScript inspect(HostProfile profile, String service, List<Artifact> artifacts) {
    return rendererFor(profile).render(
        "inspect",
        new ScriptValues()
            .with("staging_dir", profile.stagingDir())
            .with("backup_dir", profile.backupDir())
            .with("bin_dir", profile.binDir())
            .with("version_binary", distribution.versionBinary())
            .with("service", service)
            .withRows(
                "install_paths", artifacts.stream().map(a -> List.of(a.installPath())).toList()));
  }

  RemoteScript stagePrepare(HostProfile profile, List<Artifact> artifacts) {
    return rendererFor(profile).render(
        "stage-prepare",
        new ScriptValues()
            .with("staging_dir", profile.stagingDir())
            .withRows(
                "artifacts",
                artifacts.stream()
                    .map(a -> List.of(a.name(), a.stagedFileName(), a.sha256(), a.installPath(),
                        Long.toString(a.sizeBytes())))
                    .toList()));
  }

  RemoteScript stageCommit(HostProfile profile, List<Artifact> artifacts) {
    return rendererFor(profile).render(
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
    if (profile.kairos()) {
      // kairos-agent upgrade keeps the running image as passive: the script only checks it can.
      return kairos.render("backup", new ScriptValues());
    }
    return renderer.render(
        "backup",
        new ScriptValues()
            .with("backup_dir", profile.backupDir())
            .withRows("files", existing.stream().map(f -> List.of(f.path(), f.sha256())).toList()));
  }

  RemoteScript install(HostProfile profile, List<Artifact> artifacts) {
    if (profile.kairos()) {
      return kairos.render(
          "install",
          new ScriptValues()
              .with("staging_dir", profile.stagingDir())
              .with("image_path", ArtifactRules.KAIROS_ACTIVE_IMAGE)
              .withRows(
                  "artifacts",
                  artifacts.stream()
                      .map(a -> List.of(a.name(), a.stagedFileName(), a.sha256(), a.source()))
                      .toList()));
    }
    ScriptValues values = new ScriptValues();
    if (distribution.importsImages()) {
      values.withRows(
          "images",
          artifacts.stream()
              .filter(a -> a.kind() == ArtifactKind.IMAGE_ARCHIVE)
              .map(a -> List.of(a.name(), a.installPath()))
              .toList());
    }
    if (distribution.managesOwnService()) {
      values.with("bin_dir", profile.binDir());
    }
    return renderer.render(
        "install",
        values
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
    ScriptValues values = new ScriptValues();
    if (distribution.managesOwnService()) {
      values.with("binary_path", HostDistribution.K0S_BINARY);
    }
    return renderer.render(
        "restart",
        values
            .with("service", service)
            .with("active_checks", Integer.toString(ACTIVE_CHECKS))
            .with("check_interval_seconds", Integer.toString(CHECK_INTERVAL_SECONDS)));
  }

  /** Reboots a Kairos host once for its boot plan, made in boot {@code fromBoot}. */
  RemoteScript reboot(String fromBoot) {
    return kairos.render("reboot", new ScriptValues().with("from_boot", fromBoot));
  }

  /** After the reboot: the boot ID, the boot entry against the plan, the service active. */
  RemoteScript afterReboot(String fromBoot, String service) {
    return kairos.render(
        "after-reboot",
        new ScriptValues()
            .with("from_boot", fromBoot)
            .with("service", service)
            .with("active_checks", Integer.toString(ACTIVE_CHECKS))
            .with("check_interval_seconds", Integer.toString(CHECK_INTERVAL_SECONDS)));
  }

  RemoteScript restore(HostProfile profile, List<InstalledFile> previous) {
    if (profile.kairos()) {
      return kairos.render("restore", new ScriptValues().with("image_path", ArtifactRules.KAIROS_ACTIVE_IMAGE));
    }
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
    if (distribution.backupArchives()) {
      return renderer.render(
          "etcd-snapshot",
          new ScriptValues()
              .with("bin_dir", profile.binDir())
              .with("snapshot_dir", distribution.etcdSnapshotDir())
              .with("name", name));
    }
    if (distribution.etcdctlSnapshots()) {
      return renderer.render(
          "etcd-snapshot",
          new ScriptValues()
              .with("bin_dir", profile.binDir())
              .with("snapshot_dir", distribution.etcdSnapshotDir())
              .with("pki_dir", ETCD_PKI_DIR)
              .with("endpoint", ETCD_ENDPOINT)
              .with("name", name));
    }
    return renderer.render(
        "etcd-snapshot",
        new ScriptValues()
            .with("bin_dir", profile.binDir())
            .with("binary", distribution.versionBinary())
            .with("snapshot_dir", distribution.etcdSnapshotDir())
            .with("name", name));
  }

  /**
   * The distribution's upgrade command (kubeadm): {@code kubeadm upgrade plan} and {@code apply} on
   * the first control plane, {@code kubeadm upgrade node} elsewhere; with an UpgradeConfiguration
   * (kubeadm.k8s.io/v1beta4) through {@code --config} from v1.30 on.
   */
  RemoteScript upgrade(HostProfile profile, NodeRole role, String version, boolean firstControlPlane) {
    KubeVersion target = KubeVersion.parse(version);
    boolean config = target.major() > 1 || target.minor() >= UPGRADE_CONFIGURATION_FROM_MINOR;
    return renderer.render(
        "upgrade",
        new ScriptValues()
            .with("bin_dir", profile.binDir())
            .with("version", version)
            .with("mode", firstControlPlane ? "apply" : "node")
            .with("role", role == NodeRole.CONTROL_PLANE ? "control-plane" : "worker")
            .with("manifests_dir", MANIFESTS_DIR)
            .with("config_file", profile.stagingDir() + "/kubeadm-upgrade-" + version + ".yaml")
            .with("use_config", Boolean.toString(config))
            .with("ignore_preflight_errors", String.join(",", IGNORED_PREFLIGHT_ERRORS)));
  }

  /** kubeadm accepts {@code UpgradeConfiguration} through {@code --config} from this minor of 1.x on. */
  static final int UPGRADE_CONFIGURATION_FROM_MINOR = 30;

  /**
   * kubeadm's preflight refuses to upgrade when it cannot migrate the CoreDNS Corefile (a plugin
   * its migration tool does not know, common on customised clusters). Ignoring these two checks lets
   * the upgrade go on and keeps the Corefile as it is (docs/kubeadm.md, "The CoreDNS pitfall").
   */
  static final List<String> IGNORED_PREFLIGHT_ERRORS = List.of("CoreDNSUnsupportedPlugins", "CoreDNSMigration");

  static final String MANIFESTS_DIR = "/etc/kubernetes/manifests";
  static final String ETCD_PKI_DIR = "/etc/kubernetes/pki/etcd";
  static final String ETCD_ENDPOINT = "https://127.0.0.1:2379";

  /** Staged files are uploaded under this name and renamed once their digest checks out. */
  static String partPath(HostProfile profile, Artifact artifact) {
    return profile.stagingDir() + "/." + artifact.stagedFileName() + ".part";
  }
}
