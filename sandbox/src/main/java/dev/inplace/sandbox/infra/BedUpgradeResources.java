package dev.inplace.sandbox.infra;

import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.DrainSpec;
import dev.inplace.worker.crd.SshSpec;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.time.Duration;

/**
 * The ControlPlaneUpgrade and WorkersUpgrade a user applies to a {@link RealCapiBed} cluster (the
 * custom-resource door), and the wait for each to end.
 */
public final class BedUpgradeResources {
  public static final String CONTROL_PLANE = RealCapiBed.CLUSTER + "-control-plane";
  public static final String WORKERS = RealCapiBed.CLUSTER + "-workers";

  private BedUpgradeResources() {}

  public static ControlPlaneUpgrade controlPlane(SshSettings ssh, Distribution distribution, String version) {
    ControlPlaneUpgradeSpec spec = new ControlPlaneUpgradeSpec();
    describe(spec, ssh, distribution, version);
    return ControlPlaneUpgrade.of(RealCapiBed.NAMESPACE, CONTROL_PLANE, spec);
  }

  public static WorkersUpgrade workers(SshSettings ssh, Distribution distribution, String version) {
    WorkersUpgradeSpec spec = new WorkersUpgradeSpec();
    describe(spec, ssh, distribution, version);
    spec.setMaxUnavailable(new IntOrString(1));
    return WorkersUpgrade.of(RealCapiBed.NAMESPACE, WORKERS, spec);
  }

  /**
   * Waits until the resource's phase is terminal and returns its status, running {@code everyPoll}
   * (which may throw to stop the wait) at each poll; judging the phase is the caller's.
   */
  public static <T extends CustomResource<?, UpgradeStatus>> UpgradeStatus awaitEnd(
      CapiEstate estate, KubernetesClient mgmt, Class<T> type, String name, Duration atMost, Runnable everyPoll) {
    UpgradeStatus[] last = new UpgradeStatus[1];
    estate.await(type.getSimpleName() + " " + name + " ended", atMost, () -> {
      everyPoll.run();
      T resource = mgmt.resources(type).inNamespace(RealCapiBed.NAMESPACE).withName(name).get();
      last[0] = resource == null ? null : resource.getStatus();
      UpgradePhase phase = last[0] == null ? null : last[0].getPhase();
      return phase == UpgradePhase.SUCCEEDED || phase == UpgradePhase.FAILED || phase == UpgradePhase.HALTED
          || phase == UpgradePhase.ABORTED;
    });
    return last[0];
  }

  private static void describe(UpgradeSpec<?> spec, SshSettings ssh, Distribution distribution, String version) {
    spec.setClusterName(RealCapiBed.CLUSTER)
        .setVersion(version)
        .setDistribution(distribution)
        .setReleaseCatalogue(new CatalogueReference(RealCapiBed.CATALOGUE, null))
        .setSsh(new SshSpec().setUser(ssh.user()).setPort(ssh.port())
            .setPrivateKeySecret(ssh.privateKeySecret()).setKnownHostsSecret(ssh.knownHostsSecret()))
        .setReadyTimeoutSeconds(60L)
        .setDrain(new DrainSpec().setTimeoutSeconds(60L).setDeleteEmptyDirData(true));
  }
}
