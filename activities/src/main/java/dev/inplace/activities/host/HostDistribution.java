package dev.inplace.activities.host;

import dev.inplace.workflows.api.Distribution;

/**
 * What differs between distributions on a host: which script templates to use, which binary reports
 * the installed version and where etcd snapshots land. Everything else in the host steps is shared.
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
   * Directory on a control-plane host where {@code etcd-snapshot save} writes its files, or null
   * when this distribution's host steps take no snapshots.
   */
  String etcdSnapshotDir();

  /**
   * The k3s layout: one {@code k3s} binary that serves, runs the agent, reports the version and
   * saves etcd snapshots into its default snapshot dir.
   */
  static HostDistribution k3s() {
    return new Fixed(Distribution.K3S, "k3s", "k3s", "/var/lib/rancher/k3s/server/db/snapshots");
  }

  record Fixed(
      Distribution distribution, String scriptFolder, String versionBinary, String etcdSnapshotDir)
      implements HostDistribution {}
}
