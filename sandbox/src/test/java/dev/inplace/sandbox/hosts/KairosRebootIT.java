package dev.inplace.sandbox.hosts;

import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.KubernetesClient;
import dev.inplace.sandbox.estate.HostRecords;
import dev.inplace.activities.capi.HostAuthority;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.activities.host.HostActivitiesImpl;
import dev.inplace.activities.host.HostDistribution;
import dev.inplace.activities.host.RebootProgress;
import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.InstallRequest;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostActivities.RestoreRequest;
import dev.inplace.workflows.api.HostActivities.ServiceRequest;
import dev.inplace.workflows.api.HostActivities.ServiceResult;
import dev.inplace.workflows.api.HostActivities.StageRequest;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The product's Kairos steps against a sandbox node with the fake kairos-agent and real reboots:
 * the SSH server goes down, the node boots (new boot ID) and comes back with the same host key.
 */
@EnableKubernetesMockClient(crud = true)
class KairosRebootIT {
  static KubernetesClient management;

  private static final String FROM = "v1.30.6+k3s1";
  private static final String TO = "v1.31.2+k3s1";
  private static final String NODE = "kairos-0";
  private static final String SERVICE = "k3s-agent";
  private static final HostProfile PROFILE = HostProfile.k3sDefaults().withOs(HostOs.KAIROS);

  @TempDir Path estate;
  private SandboxHosts hosts;
  private FakeReleases releases;
  private SandboxHost node;
  private HostAccess access;
  private Map<String, Map<String, byte[]>> secrets;

  @BeforeEach
  void setUp() {
    releases = new FakeReleases(estate.resolve("artifacts"), FakeReleaseSizes.small(), Distribution.K3S, HostOs.KAIROS);
    releases.add(FROM);
    releases.add(TO);
    hosts = SandboxHosts.open(estate, new SandboxHosts.Settings("inplace", 0, 96));
    node = hosts.provision(NODE, NodeRole.WORKER, FROM, releases);
    secrets = Map.of(
        "edge-ssh-key", Map.of(SshSettings.PRIVATE_KEY_DATA_KEY, hosts.clientPrivateKey().getBytes(StandardCharsets.UTF_8)),
        "edge-known-hosts", Map.of(SshSettings.KNOWN_HOSTS_DATA_KEY, hosts.knownHosts().getBytes(StandardCharsets.UTF_8)));
    access = HostRecords.record(management, "team-a", "edge", "edge-" + NODE, NODE, node.address(), hosts.user(),
        hosts.port());
  }

  @AfterEach
  void tearDown() {
    hosts.close();
  }

  /** A worker's host steps: its own SSH connector (connections, pinned keys). */
  private HostActivitiesImpl worker(Duration commandTimeout) {
    SshConnector ssh = new SshConnector((namespace, name) -> secrets.get(name),
        new SshClientOptions(Duration.ofSeconds(2), Duration.ofSeconds(10), commandTimeout, Duration.ofSeconds(5)));
    return new HostActivitiesImpl(ssh, new HostAuthority(management),
        new ArtifactCache(estate.resolve("cache"), ArtifactSourcePolicy.mirror(estate.resolve("artifacts"))),
        HostDistribution.k3s());
  }

  private HostActivitiesImpl worker() {
    return worker(Duration.ofSeconds(60));
  }

  @Test
  void theRestartStepRebootsIntoTheNewImageOnceAndReconnectsToTheSameHostKey() throws Exception {
    HostActivitiesImpl worker = worker();
    install(worker, releases.osImage(TO));
    String bootBefore = bootId();

    ServiceResult result = worker.restartService(restart());

    assertEquals(new ServiceResult(SERVICE, true), result);
    assertNotEquals(bootBefore, bootId(), "a new boot");
    assertEquals("active_boot", kairos("booted"));
    assertEquals("1", kairos("boots"));
    assertTrue(k3sVersion().contains(TO), k3sVersion());
    // The same pinned key answered after the reboot: a changed key would have failed the connection.
    assertEquals(hosts.knownHosts(), new String(secrets.get("edge-known-hosts").get(SshSettings.KNOWN_HOSTS_DATA_KEY),
        StandardCharsets.UTF_8));

    // Observed before acting: the plan is done, a second restart step does not reboot again.
    String bootAfter = bootId();
    assertEquals(new ServiceResult(SERVICE, true), worker.restartService(restart()));
    assertEquals(bootAfter, bootId());
    assertEquals("1", kairos("boots"));
    // And a second install of the same image is reported, not written over the fallback.
    assertEquals(List.of("os-image"), install(worker, releases.osImage(TO)).alreadyInstalled());
    assertEquals(releases.osImage(FROM).sha256(), kairos("passive"));
  }

  @Test
  void aWorkerThatCrashesWhileTheHostIsDownResumesTheWaitWithoutRebootingAgain() throws Exception {
    hosts.rebootDowntime(Duration.ofSeconds(4));
    install(worker(), releases.osImage(TO));
    String bootBefore = bootId();

    // Worker A starts the restart step and dies while the node is down.
    HostActivitiesImpl a = worker();
    Thread attemptA = new Thread(() -> {
      try {
        a.restartService(restart());
      } catch (RuntimeException dying) {
        // the "crash": the attempt is abandoned
      }
    });
    attemptA.start();
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (node.isUp() && System.nanoTime() < deadline) {
      Thread.sleep(20);
    }
    assertTrue(!node.isUp(), "the node went down for its reboot");
    attemptA.interrupt();
    attemptA.join(10_000);

    // Worker B runs the retried attempt with attempt A's last heartbeat, while the node is still down.
    TestActivityEnvironment env = TestActivityEnvironment.newInstance();
    try {
      env.registerActivitiesImplementations(worker());
      env.setHeartbeatDetails(new RebootProgress(bootBefore, "rebooting " + NODE + " into active_boot"));
      HostActivities stub = env.newActivityStub(HostActivities.class,
          io.temporal.activity.ActivityOptions.newBuilder().setStartToCloseTimeout(Duration.ofSeconds(60)).build());
      assertTrue(!node.isUp(), "B starts while the node is down");
      ServiceResult result = stub.restartService(restart());

      assertEquals(new ServiceResult(SERVICE, true), result);
    } finally {
      env.close();
    }
    assertNotEquals(bootBefore, bootId());
    assertEquals("1", kairos("boots"), "one reboot, however many attempts");
    assertEquals("active_boot", kairos("booted"));
  }

  @Test
  void anImageThatDoesNotBootIsReportedAndTheRollbackKeepsTheFallbackWithoutAnotherReboot() throws Exception {
    HostActivitiesImpl worker = worker();
    hosts.faults().armKairos(NODE, "boot", TO);
    install(worker, releases.osImage(TO));

    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class,
        assertThrows(RuntimeException.class, () -> worker.restartService(restart())));
    assertEquals(UpgradeFailures.OS_IMAGE_DID_NOT_BOOT, failure.getType());
    assertTrue(failure.getOriginalMessage().contains("passive_boot"), failure.getOriginalMessage());
    assertEquals("passive_boot", kairos("booted"));

    assertTrue(worker.restoreBinaries(restore()).changed());
    assertEquals(new ServiceResult(SERVICE, true), worker.restartService(restart()));
    assertEquals("1", kairos("boots"), "boot assessment already started the fallback: no second reboot");
    assertTrue(k3sVersion().contains(FROM), k3sVersion());
    assertEquals("fallback", kairos("default"));
  }

  @Test
  void theRollbackRebootsIntoTheFallbackImage() throws Exception {
    HostActivitiesImpl worker = worker();
    install(worker, releases.osImage(TO));
    worker.restartService(restart());
    assertTrue(k3sVersion().contains(TO), k3sVersion());

    assertTrue(worker.restoreBinaries(restore()).changed());
    assertEquals(new ServiceResult(SERVICE, true), worker.restartService(restart()));

    assertEquals("2", kairos("boots"));
    assertEquals("passive_boot", kairos("booted"));
    assertTrue(k3sVersion().contains(FROM), k3sVersion());
  }

  @Test
  void anAirGappedArchiveIsStagedAndInstalledFromADirectory() throws Exception {
    HostActivitiesImpl worker = worker();
    Artifact archive = releases.osImageArchive(TO);
    TestActivityEnvironment env = TestActivityEnvironment.newInstance();
    try {
      env.registerActivitiesImplementations(worker);
      HostActivities stub = env.newActivityStub(HostActivities.class,
          io.temporal.activity.ActivityOptions.newBuilder().setStartToCloseTimeout(Duration.ofSeconds(60)).build());
      // The staging step heartbeats its progress: it runs as an activity.
      assertEquals(List.of("os-image"),
          stub.stageArtifacts(new StageRequest(access, PROFILE, List.of(archive), Distribution.K3S)).uploaded());
    } finally {
      env.close();
    }

    assertEquals(List.of("os-image"), install(worker, archive).installed());
    worker.restartService(restart());

    assertTrue(k3sVersion().contains(TO), k3sVersion());
    assertTrue(kairos("active").startsWith("dir-"), kairos("active"));
  }

  @Test
  void aHostThatNeverComesBackFailsTheStepWithItsOwnReason() throws Exception {
    HostActivitiesImpl worker = worker(Duration.ofSeconds(8));
    hosts.faults().armKairos(NODE, "return", TO);
    install(worker, releases.osImage(TO));

    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class,
        assertThrows(RuntimeException.class, () -> worker.restartService(restart())));

    assertEquals(UpgradeFailures.HOST_DID_NOT_RETURN, failure.getType());
    assertTrue(!node.isUp());
  }

  private HostActivities.InstallResult install(HostActivitiesImpl worker, Artifact image) {
    return worker.installArtifacts(new InstallRequest(access, PROFILE, List.of(image), Distribution.K3S));
  }

  private ServiceRequest restart() {
    return new ServiceRequest(access, SERVICE, Distribution.K3S);
  }

  private RestoreRequest restore() {
    return new RestoreRequest(access, PROFILE, List.of(new InstalledFile(ArtifactRules.KAIROS_ACTIVE_IMAGE, null)),
        List.of(releases.osImage(TO)), Distribution.K3S);
  }

  private String bootId() throws IOException {
    return Files.readString(node.root().resolve("proc/sys/kernel/random/boot_id")).strip();
  }

  private String kairos(String file) throws IOException {
    return Files.readString(node.root().resolve(".sandbox/kairos").resolve(file)).strip();
  }

  private String k3sVersion() throws IOException {
    return Files.readString(node.root().resolve("usr/local/bin/k3s"), StandardCharsets.ISO_8859_1)
        .lines().filter(l -> l.contains("v1.")).findFirst().orElse("");
  }
}
