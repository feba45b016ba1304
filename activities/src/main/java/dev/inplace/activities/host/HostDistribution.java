package dev.inplace.activities.host;

import dev.inplace.workflows.api.Distribution;
import java.util.List;

/**
 * What differs between distributions on a host: which script templates to use, which binary reports
 * the installed version, where etcd snapshots land, whether image archives are imported, and the
 * distribution's own upgrade command. Everything else in the host steps is shared ({@code
 * scripts/common/}).
 */
public interface HostDistribution {

  Distribution distribution();

  /** Folder under {@code scripts/} on the classpath holding this distribution's templates. */
  String scriptFolder();

  /**
   * Binary in the profile's bin dir whose {@code --version} prints the installed version (for k3s
   * it also takes etcd snapshots).
   */
  String versionBinary();

  /**
   * Directory on a control-plane host where etcd snapshots are written, or null when this
   * distribution's host steps take no snapshots.
   */
  String etcdSnapshotDir();

  /**
   * Whether image archives are imported into containerd's {@code k8s.io} namespace at install
   * ({@code ctr -n k8s.io images import}) rather than picked up by the runtime at start (k3s).
   */
  boolean importsImages();

  /**
   * Whether etcd snapshots are taken with {@code etcdctl} and the etcd static pod's certificates
   * (kubeadm) rather than by the distribution's own binary ({@code k3s etcd-snapshot save}).
   */
  boolean etcdctlSnapshots();

  /**
   * Whether the service is stopped and started with the distribution's own binary ({@code k0s stop},
   * {@code k0s start}) rather than restarted through systemd; then the install step stops it first
   * and the restart step starts it.
   */
  default boolean managesOwnService() {
    return false;
  }

  /**
   * Whether etcd snapshots are {@code k0s backup} archives (etcd or kine data, certificates and
   * manifests) rather than {@code k3s etcd-snapshot save} or {@code etcdctl snapshot save}.
   */
  default boolean backupArchives() {
    return false;
  }

  /** Whether {@code upgrade.sh} runs the distribution's own upgrade command (kubeadm). */
  default boolean hasUpgradeCommand() {
    return distribution().hasUpgradeCommand();
  }

  /**
   * The k3s layout: one {@code k3s} binary that serves, runs the agent, reports the version and
   * saves etcd snapshots into its default snapshot dir; image archives dropped into the images dir
   * are imported by k3s when it starts.
   */
  static HostDistribution k3s() {
    return new Fixed(Distribution.K3S, "k3s", "k3s", "/var/lib/rancher/k3s/server/db/snapshots", false, false);
  }

  /**
   * The kubeadm layout: the kubelet reports the node's version; etcd snapshots are taken with
   * {@code etcdctl} (on the host, or the etcd static pod's own through {@code crictl exec}) into
   * {@value #KUBEADM_SNAPSHOT_DIR}; image archives are imported with {@code ctr} before the upgrade.
   */
  static HostDistribution kubeadm() {
    return new Fixed(Distribution.KUBEADM, "kubeadm", "kubelet", KUBEADM_SNAPSHOT_DIR, true, true);
  }

  /** Where kubeadm control planes keep the etcd snapshots inplace takes. */
  String KUBEADM_SNAPSHOT_DIR = "/var/lib/inplace/etcd-snapshots";

  /**
   * The k0s layout ({@code k0s install controller|worker}): one {@code k0s} binary, {@code k0s
   * version} reports the release, {@code k0s stop} and {@code k0s start} drive its service, {@code k0s
   * backup} saves etcd into {@value #K0S_BACKUP_DIR}; the airgap image bundle in {@code
   * /var/lib/k0s/images/} is imported by k0s when it starts (docs/k0s.md).
   */
  static HostDistribution k0s() {
    return new K0s();
  }

  /** Where k0s controllers keep the backups inplace takes, one directory per snapshot name. */
  String K0S_BACKUP_DIR = "/var/lib/inplace/k0s-backups";

  /**
   * The k0s binary the restart step stops and starts: the restart request names the service only, not
   * the host profile, so this is the standard path (k0smotron's {@code k0sInstallDir} default).
   */
  String K0S_BINARY = "/usr/local/bin/k0s";

  /** Every distribution the host steps support. */
  static List<HostDistribution> all() {
    return List.of(k3s(), kubeadm(), k0s());
  }

  /** See {@link #k0s()}. */
  record K0s() implements HostDistribution {
    @Override
    public Distribution distribution() {
      return Distribution.K0S;
    }

    @Override
    public String scriptFolder() {
      return "k0s";
    }

    @Override
    public String versionBinary() {
      return "k0s";
    }

    @Override
    public String etcdSnapshotDir() {
      return K0S_BACKUP_DIR;
    }

    @Override
    public boolean importsImages() {
      return false;
    }

    @Override
    public boolean etcdctlSnapshots() {
      return false;
    }

    @Override
    public boolean managesOwnService() {
      return true;
    }

    @Override
    public boolean backupArchives() {
      return true;
    }
  }

  /**
   * The host steps of {@code distribution}: the one seam plans and activities pick a distribution's
   * scripts through, so a distribution added to {@link #all()} is planned too.
   *
   * @throws IllegalArgumentException when no host steps exist for it
   */
  static HostDistribution of(Distribution distribution) {
    return all().stream()
        .filter(d -> d.distribution() == distribution)
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("no host steps for distribution " + distribution));
  }

  record Fixed(
      Distribution distribution,
      String scriptFolder,
      String versionBinary,
      String etcdSnapshotDir,
      boolean importsImages,
      boolean etcdctlSnapshots)
      implements HostDistribution {}
}
