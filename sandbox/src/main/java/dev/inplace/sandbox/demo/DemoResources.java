package dev.inplace.sandbox.demo;

import dev.inplace.workflows.api.HostOs;

import dev.inplace.sandbox.estate.Estate;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.DrainSpec;
import dev.inplace.worker.crd.SshSpec;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.api.model.IntOrString;

/** The ControlPlaneUpgrade and WorkersUpgrade resources the demo applies to the estate. */
public final class DemoResources {
  public static final String CATALOGUE = "k3s-releases";
  public static final String CONTROL_PLANE = Estate.CLUSTER + "-control-plane";
  public static final String WORKERS = Estate.CLUSTER + "-workers";

  private DemoResources() {}

  public static ControlPlaneUpgrade controlPlane(DemoOptions options, SshSettings ssh) {
    ControlPlaneUpgradeSpec spec = new ControlPlaneUpgradeSpec();
    describe(spec, options, ssh);
    return ControlPlaneUpgrade.of(Estate.NAMESPACE, CONTROL_PLANE, spec);
  }

  public static WorkersUpgrade workers(DemoOptions options, SshSettings ssh) {
    WorkersUpgradeSpec spec = new WorkersUpgradeSpec();
    describe(spec, options, ssh);
    spec.setMaxUnavailable(new IntOrString(options.maxUnavailable()));
    return WorkersUpgrade.of(Estate.NAMESPACE, WORKERS, spec);
  }

  /** The fields both resources share. */
  private static void describe(UpgradeSpec<?> spec, DemoOptions options, SshSettings ssh) {
    spec.setClusterName(Estate.CLUSTER)
        .setVersion(options.to())
        .setDistribution(options.distribution())
        .setReleaseCatalogue(new CatalogueReference(CATALOGUE, null))
        .setSsh(new SshSpec().setUser(ssh.user()).setPort(ssh.port())
            .setPrivateKeySecret(ssh.privateKeySecret()).setKnownHostsSecret(ssh.knownHostsSecret()))
        .setReadyTimeoutSeconds(options.readyTimeoutSeconds())
        .setDrain(new DrainSpec().setTimeoutSeconds(options.drainTimeoutSeconds()).setDeleteEmptyDirData(true));
    if (options.os() == HostOs.KAIROS) {
      spec.setHostProfile(new dev.inplace.worker.crd.HostProfileSpec().setOs(options.os().cliName()));
    }
  }
}
