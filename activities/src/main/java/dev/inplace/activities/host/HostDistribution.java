package dev.inplace.activities.host;

import dev.inplace.workflows.api.Distribution;

/**
 * What differs between distributions on a host: which script templates to use and which binary
 * reports the installed version. Everything else in the host steps is shared.
 */
public interface HostDistribution {

  Distribution distribution();

  /** Folder under {@code scripts/} on the classpath holding this distribution's templates. */
  String scriptFolder();

  /** Binary in the profile's bin dir whose {@code --version} prints the installed version. */
  String versionBinary();

  /** The k3s layout: one {@code k3s} binary that serves, runs the agent and reports the version. */
  static HostDistribution k3s() {
    return new Fixed(Distribution.K3S, "k3s", "k3s");
  }

  record Fixed(Distribution distribution, String scriptFolder, String versionBinary)
      implements HostDistribution {}
}
