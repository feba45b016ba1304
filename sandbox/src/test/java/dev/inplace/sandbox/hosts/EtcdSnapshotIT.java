package dev.inplace.sandbox.hosts;

import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.KubernetesClient;
import dev.inplace.sandbox.estate.HostRecords;
import dev.inplace.activities.capi.HostAuthority;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.host.HostActivitiesImpl;
import dev.inplace.activities.host.HostDistribution;
import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The product's snapshot step against a sandbox server whose fake k3s saves etcd snapshots. */
@EnableKubernetesMockClient(crud = true)
class EtcdSnapshotIT {
  static KubernetesClient management;
  private static final String VERSION = "v1.30.4+k3s1";
  private static final String SNAPSHOT_DIR = "/var/lib/rancher/k3s/server/db/snapshots";
  private static final String NAME = "inplace-pre-v1.31.2-k3s1";

  @TempDir Path estate;
  private SandboxHosts hosts;
  private HostActivitiesImpl activities;
  private HostAccess access;

  @BeforeEach
  void setUp() {
    FakeReleases releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small());
    releases.add(VERSION);
    hosts = SandboxHosts.open(estate, new SandboxHosts.Settings("inplace", 0, 90));
    SandboxHost cp = hosts.provision("cp-1", NodeRole.CONTROL_PLANE, VERSION, releases);
    Map<String, Map<String, byte[]>> secrets =
        Map.of(
            "edge-ssh-key",
            Map.of(
                SshSettings.PRIVATE_KEY_DATA_KEY,
                hosts.clientPrivateKey().getBytes(StandardCharsets.UTF_8)),
            "edge-known-hosts",
            Map.of(
                SshSettings.KNOWN_HOSTS_DATA_KEY,
                hosts.knownHosts().getBytes(StandardCharsets.UTF_8)));
    SshConnector ssh =
        new SshConnector((namespace, name) -> secrets.get(name), SshClientOptions.defaults());
    activities =
        new HostActivitiesImpl(
            ssh, new HostAuthority(management), new ArtifactCache(estate.resolve("cache"), dev.inplace.activities.artifacts.ArtifactSourcePolicy.mirror(estate.resolve("artifacts"))), HostDistribution.k3s());
    access = HostRecords.record(management, "team-a", "edge", "edge-cp-1", "cp-1", cp.address(), hosts.user(),
        hosts.port());
  }

  @AfterEach
  void tearDown() {
    hosts.close();
  }

  @Test
  void theFakeK3sSavesTheSnapshotOnceAndTheRetryFindsIt() throws IOException {
    EtcdSnapshotResult first = activities.snapshotEtcd(request());
    EtcdSnapshotResult second = activities.snapshotEtcd(request());

    assertFalse(first.alreadyTaken());
    assertTrue(
        first.location().matches(SNAPSHOT_DIR + "/" + NAME + "-cp-1-[0-9]{10,}"), first.location());
    assertEquals(new EtcdSnapshotResult(NAME, first.location(), true), second);
    Path file = hosts.host("cp-1").root().resolve(first.location().substring(1));
    assertTrue(Files.readString(file).startsWith("fake etcd snapshot " + NAME + "-cp-1-"));
    try (Stream<Path> files = Files.list(file.getParent())) {
      assertEquals(1, files.count(), "one snapshot, however often the step runs");
    }
  }

  @Test
  void anArmedSnapshotFaultFailsTheStepUntilCleared() {
    hosts.faults().arm("cp-1", UpgradeStep.SNAPSHOT, "v1.31.2+k3s1");

    ApplicationFailure failure =
        assertInstanceOf(
            ApplicationFailure.class,
            assertThrows(RuntimeException.class, () -> activities.snapshotEtcd(request())));

    assertEquals(UpgradeFailures.ETCD_SNAPSHOT_FAILED, failure.getType());
    assertTrue(
        failure.getOriginalMessage().contains("injected fault at snapshot on cp-1"),
        failure.getOriginalMessage());
    assertFalse(Files.exists(hosts.host("cp-1").root().resolve(SNAPSHOT_DIR.substring(1))));

    hosts.faults().clear("cp-1", UpgradeStep.SNAPSHOT);
    assertFalse(activities.snapshotEtcd(request()).alreadyTaken());
    assertEquals(List.of(), List.copyOf(hosts.faults().armed("cp-1").keySet()));
  }

  private EtcdSnapshotRequest request() {
    return new EtcdSnapshotRequest(access, Distribution.K3S, HostProfile.k3sDefaults(), NAME);
  }
}
