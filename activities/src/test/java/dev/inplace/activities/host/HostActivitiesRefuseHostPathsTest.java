package dev.inplace.activities.host;

import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.KubernetesClient;
import dev.inplace.activities.capi.HostAuthority;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An activity does not take a workflow input's word for the host profile (issue 34): a directory
 * outside the allowlist is refused, non-retryable, before any Secret is read or SSH connection made.
 */
@EnableKubernetesMockClient(crud = true)
class HostActivitiesRefuseHostPathsTest {
  static KubernetesClient management;

  @TempDir Path dir;

  @Test
  void aBinDirOutsideTheLayoutIsRefusedBeforeAnySecretIsReadOrHostReached() {
    AtomicInteger secretReads = new AtomicInteger();
    HostActivitiesImpl activities = new HostActivitiesImpl(
        new SshConnector((namespace, name) -> {
          secretReads.incrementAndGet();
          throw new AssertionError("no Secret may be read for a refused profile");
        }, SshClientOptions.defaults()),
        new HostAuthority(management),
        new ArtifactCache(dir, ArtifactSourcePolicy.httpsOnly()), HostDistribution.k3s());
    HostProfile k3s = HostProfile.k3sDefaults();
    HostProfile rootfs = new HostProfile("/run/containerd/io.containerd.runtime.v2.task/k8s.io/0a1b/rootfs/bin",
        k3s.imagesDir(), k3s.stagingDir(), k3s.backupDir(), k3s.serverService(), k3s.agentService());
    HostAccess host = new HostAccess("fleet", "cp-1", "10.0.0.1",
        new SshSettings("root", 22, "edge-1-ssh-key", "edge-1-known-hosts", null));

    ApplicationFailure refused = assertThrows(ApplicationFailure.class, () -> activities.inspectHost(
        new HostActivities.HostInspectRequest(host, Distribution.K3S, NodeRole.CONTROL_PLANE, rootfs, List.of())));

    assertEquals(UpgradeFailures.INVALID_REQUEST, refused.getType());
    assertTrue(refused.isNonRetryable());
    assertTrue(refused.getOriginalMessage().startsWith("refusing the host profile: binDir /run/containerd/"),
        refused.getOriginalMessage());
    assertEquals(0, secretReads.get());
  }
}
