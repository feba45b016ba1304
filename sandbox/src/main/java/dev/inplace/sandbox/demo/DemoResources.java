package dev.inplace.sandbox.demo;

import dev.inplace.workflows.api.HostOs;

import dev.inplace.sandbox.estate.Estate;
import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.DrainSpec;
import dev.inplace.worker.crd.HostLayoutSpec;
import dev.inplace.worker.crd.HostProfileSpec;
import dev.inplace.worker.crd.InplaceHostProfile;
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
  /** The administrator's InplaceHostProfile the resources name with {@code --bin-dir}. */
  public static final String HOST_PROFILE = "demo-layout";

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
    if (options.os() == HostOs.KAIROS || options.binDir() != null) {
      spec.setHostProfile(new HostProfileSpec()
          .setOs(options.os() == HostOs.KAIROS ? options.os().cliName() : null)
          .setName(options.binDir() == null ? null : HOST_PROFILE));
    }
  }

  /** With {@code --bin-dir}: the cluster-scoped profile an administrator would create; else none. */
  public static java.util.Optional<InplaceHostProfile> hostProfile(DemoOptions options) {
    return options.binDir() == null ? java.util.Optional.empty()
        : java.util.Optional.of(InplaceHostProfile.of(HOST_PROFILE, new HostLayoutSpec().setBinDir(options.binDir())));
  }
}
