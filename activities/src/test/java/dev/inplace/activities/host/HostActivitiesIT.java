package dev.inplace.activities.host;

import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.KubernetesClient;
import dev.inplace.activities.capi.HostAuthority;
import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static dev.inplace.activities.ssh.FailureAssertions.assertNoKeyMaterial;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.ssh.SimulatedNode;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckRequest;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.HostActivities.BackupRequest;
import dev.inplace.workflows.api.HostActivities.BackupResult;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.HostInspectRequest;
import dev.inplace.workflows.api.HostActivities.InstallRequest;
import dev.inplace.workflows.api.HostActivities.InstallResult;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostActivities.RestoreRequest;
import dev.inplace.workflows.api.HostActivities.RestoreResult;
import dev.inplace.workflows.api.HostActivities.ServiceRequest;
import dev.inplace.workflows.api.HostActivities.ServiceResult;
import dev.inplace.workflows.api.HostActivities.StageProgress;
import dev.inplace.workflows.api.HostActivities.StageRequest;
import dev.inplace.workflows.api.HostActivities.StageResult;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.activity.ActivityOptions;
import io.temporal.common.RetryOptions;
import io.temporal.failure.ApplicationFailure;
import io.temporal.testing.TestActivityEnvironment;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The k3s host steps against a simulated node reached over real SSH and SFTP. */
@EnableKubernetesMockClient(crud = true)
class HostActivitiesIT {
  static KubernetesClient management;

  private static final HostProfile PROFILE = HostProfile.k3sDefaults();
  private static final byte[] OLD_K3S =
      "#!/bin/bash\necho 'k3s version v1.30.4+k3s1 (abc)'\necho 'go version go1.22.5'\n"
          .getBytes(StandardCharsets.UTF_8);
  private static final byte[] NEW_K3S =
      "#!/bin/bash\necho 'k3s version v1.31.2+k3s1 (def)'\n".getBytes(StandardCharsets.UTF_8);
  private static final byte[] IMAGES = imageArchiveBytes();
  private static final String SNAPSHOT_DIR = "/var/lib/rancher/k3s/server/db/snapshots";

  @TempDir Path work;
  private SimulatedNode node;
  private HostActivitiesImpl activities;
  private HostAccess host;
  private Artifact k3s;
  private Artifact images;
  private TestActivityEnvironment temporal;
  private final List<StageProgress> heartbeats = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    node = new SimulatedNode(Files.createDirectories(work.resolve("node")));
    host = node.access("root");
    // The Machine the host steps confirm the request against; the request names no Machine (as
    // inputs from before the field), so it is found by its Node.
    dev.inplace.activities.capi.HostRecords.machine(management, host.secretNamespace(), "edge", "edge-machine-1",
        host.nodeName(), host.address());
    activities =
        new HostActivitiesImpl(
            node.connector(), new HostAuthority(management), new ArtifactCache(work.resolve("cache"), dev.inplace.activities.artifacts.ArtifactSourcePolicy.mirror(work.resolve("releases"))), HostDistribution.k3s());
    Path releases = Files.createDirectories(work.resolve("releases"));
    k3s =
        new Artifact(
            "k3s",
            ArtifactKind.BINARY,
            Files.write(releases.resolve("k3s"), NEW_K3S).toString(),
            sha256(NEW_K3S),
            NEW_K3S.length,
            "/usr/local/bin/k3s",
            "0755");
    images =
        new Artifact(
            "k3s-airgap-images",
            ArtifactKind.IMAGE_ARCHIVE,
            Files.write(releases.resolve("images.tar.zst"), IMAGES).toUri().toString(),
            sha256(IMAGES),
            IMAGES.length,
            PROFILE.imagesDir() + "/k3s-airgap-images-amd64.tar.zst",
            "0644");
    node.writeFile(k3s.installPath(), OLD_K3S).toFile().setExecutable(true);
    temporal = TestActivityEnvironment.newInstance();
    temporal.registerActivitiesImplementations(activities);
    temporal.setActivityHeartbeatListener(StageProgress.class, heartbeats::add);
  }

  @AfterEach
  void tearDown() throws IOException {
    temporal.close();
    node.close();
  }

  @Test
  void inspectReportsArchFreeDiskFilesVersionAndService() throws Exception {
    Files.createDirectories(node.path("/run/systemd"));
    Files.createFile(node.path("/run/systemd/k3s.active"));

    HostFacts facts = activities.inspectHost(inspectRequest(NodeRole.CONTROL_PLANE));

    assertEquals(expectedArch(), facts.arch());
    assertTrue(facts.stagingFreeBytes() > 0, "free bytes: " + facts.stagingFreeBytes());
    assertEquals(
        List.of(
            new InstalledFile(k3s.installPath(), sha256(OLD_K3S)),
            new InstalledFile(images.installPath(), null)),
        facts.installed());
    assertEquals("v1.30.4+k3s1", facts.installedVersion());
    assertTrue(facts.serviceActive());
    assertFalse(Files.exists(node.path(PROFILE.stagingDir())), "inspect changes nothing");
  }

  @Test
  void inspectWithoutBinaryReportsNoVersionAndInactiveAgent() throws Exception {
    Files.delete(node.path(k3s.installPath()));

    HostFacts facts = activities.inspectHost(inspectRequest(NodeRole.WORKER));

    assertNull(facts.installedVersion());
    assertFalse(facts.serviceActive());
    assertNull(facts.installed().get(0).sha256());
  }

  @Test
  void inspectRefusesDistributionsWithoutHostSteps() {
    HostInspectRequest kubeadm =
        new HostInspectRequest(
            host, Distribution.KUBEADM, NodeRole.WORKER, PROFILE, List.of(k3s, images));

    assertFailure(UpgradeFailures.INVALID_REQUEST, () -> activities.inspectHost(kubeadm));
    assertTrue(node.server().commands().isEmpty());
  }

  @Test
  void stageUploadsOnceThenSkipsEverythingByDigest() throws Exception {
    StageResult first = stub().stageArtifacts(stageRequest());

    assertEquals(List.of("k3s", "k3s-airgap-images"), first.uploaded());
    assertEquals(List.of(), first.alreadyPresent());
    assertEquals(NEW_K3S.length + IMAGES.length, first.bytesSent());
    assertArrayEquals(NEW_K3S, Files.readAllBytes(staged(k3s)));
    assertArrayEquals(IMAGES, Files.readAllBytes(staged(images)));
    assertEquals(List.of(), partFiles(), "no .part file is left behind");
    assertFalse(heartbeats.isEmpty(), "staging heartbeats its progress");
    assertEquals(List.of("k3s"), heartbeats.get(0).done());

    StageResult second = stub().stageArtifacts(stageRequest());

    assertEquals(List.of(), second.uploaded());
    assertEquals(List.of("k3s", "k3s-airgap-images"), second.alreadyPresent());
    assertEquals(0, second.bytesSent());
  }

  @Test
  void anInterruptedUploadResumesAtItsOffsetAndSendsOnlyTheRest() throws Exception {
    Artifact big = bigArtifact();
    StageRequest request = new StageRequest(host, PROFILE, List.of(big));
    node.server().dropConnectionAfterUploadedBytes(1_000_000);

    assertFailure(UpgradeFailures.HOST_UNREACHABLE, () -> stub().stageArtifacts(request));
    Path part = node.path(HostScripts.partPath(PROFILE, big));
    long partial = Files.size(part);
    assertTrue(partial >= 1_000_000 && partial < big.sizeBytes(), "partial: " + partial);
    long receivedBefore = node.server().uploadedBytes();

    StageResult resumed = stub().stageArtifacts(request);

    assertEquals(List.of(big.name()), resumed.uploaded());
    assertEquals(big.sizeBytes() - partial, resumed.bytesSent());
    assertEquals(big.sizeBytes() - partial, node.server().uploadedBytes() - receivedBefore);
    assertArrayEquals(Files.readAllBytes(Path.of(big.source())), Files.readAllBytes(staged(big)));
    assertEquals(List.of(), partFiles());
  }

  @Test
  void aPartialUploadWhosePrefixDiffersStartsOverFromByteZero() throws Exception {
    Artifact big = bigArtifact();
    StageRequest request = new StageRequest(host, PROFILE, List.of(big));
    node.server().dropConnectionAfterUploadedBytes(1_000_000);
    assertFailure(UpgradeFailures.HOST_UNREACHABLE, () -> stub().stageArtifacts(request));
    Path part = node.path(HostScripts.partPath(PROFILE, big));
    byte[] prefix = Files.readAllBytes(part);
    prefix[prefix.length / 2] ^= 1; // one flipped bit in the middle of what arrived
    Files.write(part, prefix);

    StageResult restarted = stub().stageArtifacts(request);

    assertEquals(big.sizeBytes(), restarted.bytesSent());
    assertArrayEquals(Files.readAllBytes(Path.of(big.source())), Files.readAllBytes(staged(big)));
  }

  /** 6 MiB of varied bytes: large enough that a dropped connection leaves a partial file. */
  private Artifact bigArtifact() throws Exception {
    byte[] data = new byte[6 * 1024 * 1024];
    new java.util.Random(42).nextBytes(data);
    Path file = Files.write(work.resolve("releases").resolve("big.bin"), data);
    return new Artifact(
        "big", ArtifactKind.BINARY, file.toString(), sha256(data), data.length, "/usr/local/bin/big", "0755");
  }

  @Test
  void stageSkipsAnArtifactAlreadyInstalledWithItsDigest() throws Exception {
    node.writeFile(k3s.installPath(), NEW_K3S);

    StageResult result = stub().stageArtifacts(stageRequest());

    assertEquals(List.of("k3s-airgap-images"), result.uploaded());
    assertEquals(List.of("k3s"), result.alreadyPresent());
    assertEquals(IMAGES.length, result.bytesSent());
  }

  @Test
  void stageRetryResumesFromHeartbeatDetails() {
    temporal.setHeartbeatDetails(new StageProgress(List.of("k3s"), 1234));

    StageResult result = stub().stageArtifacts(stageRequest());

    assertEquals(List.of("k3s-airgap-images"), result.uploaded());
    assertEquals(List.of("k3s"), result.alreadyPresent());
    assertEquals(1234 + IMAGES.length, result.bytesSent());
    assertFalse(Files.exists(staged(k3s)), "the artifact done before was not sent again");
  }

  @Test
  void corruptedUploadIsDetectedAndDiscarded() throws Exception {
    node.server().corruptNextUpload();

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.ARTIFACT_DIGEST_MISMATCH, () -> stub().stageArtifacts(stageRequest()));

    assertTrue(
        failure.getOriginalMessage().contains("expected " + k3s.sha256()),
        failure.getOriginalMessage());
    assertFalse(Files.exists(staged(k3s)));
    assertEquals(List.of(), partFiles());
    assertNoKeyMaterial(failure, node.privateKeyText());
  }

  @Test
  void backupKeepsThePreviousBinaryAndIsSafeToRunTwice() throws Exception {
    BackupRequest request = backupRequest(preflight().installed());

    BackupResult first = activities.backupBinaries(request);
    BackupResult second = activities.backupBinaries(request);

    assertEquals(List.of(k3s.installPath()), first.backedUp());
    assertEquals(List.of(), first.alreadyBackedUp());
    assertEquals(List.of(), second.backedUp());
    assertEquals(List.of(k3s.installPath()), second.alreadyBackedUp());
    assertArrayEquals(OLD_K3S, Files.readAllBytes(node.path(PROFILE.backupDir() + "/k3s.prev")));
  }

  @Test
  void backupRefusesAFileThatChangedSincePreflight() throws Exception {
    List<InstalledFile> current = preflight().installed();
    node.writeFile(k3s.installPath(), "tampered".getBytes(StandardCharsets.UTF_8));

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.BACKUP_FAILED, () -> activities.backupBinaries(backupRequest(current)));

    assertTrue(
        failure.getOriginalMessage().contains("cannot back up /usr/local/bin/k3s"),
        failure.getOriginalMessage());
    assertNoKeyMaterial(failure, node.privateKeyText());
  }

  @Test
  void installThenRestoreGivesBackTheOriginalAndRemovesTheAddedImageArchive() throws Exception {
    List<InstalledFile> previous = preflight().installed();
    stub().stageArtifacts(stageRequest());
    activities.backupBinaries(backupRequest(previous));
    InstallRequest install = new InstallRequest(host, PROFILE, List.of(k3s, images));

    InstallResult installed = activities.installArtifacts(install);
    InstallResult again = activities.installArtifacts(install);

    assertEquals(List.of("k3s", "k3s-airgap-images"), installed.installed());
    assertEquals(List.of("k3s", "k3s-airgap-images"), again.alreadyInstalled());
    assertEquals(List.of(), again.installed());
    assertArrayEquals(NEW_K3S, Files.readAllBytes(node.path(k3s.installPath())));
    assertArrayEquals(IMAGES, Files.readAllBytes(node.path(images.installPath())));
    assertEquals("rwxr-xr-x", permissions(k3s.installPath()));
    assertEquals("rw-r--r--", permissions(images.installPath()));
    assertTrue(Files.exists(staged(k3s)), "staged files are kept for a re-run");
    assertEquals("v1.31.2+k3s1", preflight().installedVersion());

    RestoreRequest restore = new RestoreRequest(host, PROFILE, previous, List.of(k3s, images));
    RestoreResult restored = activities.restoreBinaries(restore);
    RestoreResult restoredAgain = activities.restoreBinaries(restore);

    assertEquals(List.of(k3s.installPath()), restored.restored());
    assertEquals(List.of(images.installPath()), restored.removed());
    assertTrue(restored.changed());
    assertArrayEquals(OLD_K3S, Files.readAllBytes(node.path(k3s.installPath())));
    assertFalse(Files.exists(node.path(images.installPath())));
    assertEquals(new RestoreResult(List.of(), List.of(), false), restoredAgain);
    assertEquals("v1.30.4+k3s1", preflight().installedVersion());
  }

  @Test
  void installWithoutStagedFilesFails() {
    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.INSTALL_FAILED,
            () -> activities.installArtifacts(new InstallRequest(host, PROFILE, List.of(k3s))));

    assertTrue(
        failure.getOriginalMessage().contains("install step 'install'"),
        failure.getOriginalMessage());
    assertNoKeyMaterial(failure, node.privateKeyText());
  }

  @Test
  void restoreWithoutBackupFailsAsRollbackFailed() throws Exception {
    List<InstalledFile> previous = preflight().installed();
    node.writeFile(k3s.installPath(), NEW_K3S);

    assertFailure(
        UpgradeFailures.ROLLBACK_FAILED,
        () ->
            activities.restoreBinaries(new RestoreRequest(host, PROFILE, previous, List.of(k3s))));
  }

  @Test
  void restartReportsTheServiceActive() throws Exception {
    ServiceResult result = activities.restartService(new ServiceRequest(host, "k3s"));

    assertEquals(new ServiceResult("k3s", true), result);
    assertEquals(1, Files.readAllLines(node.path("/run/systemd/k3s.restarts")).size());
  }

  @Test
  void aRestartRetriedAfterItsAnswerWasLostDoesNotRestartTheServiceAgain() throws Exception {
    // Regression (chaos campaign): a restart that completed but whose answer was lost (connection
    // dropped before the exit status, worker killed) was retried and restarted the service again
    // with nothing swapped since. The restart now observes first: only a swap or restore since the
    // last completed restart (or no restart by inplace yet) makes it act.
    ServiceRequest restart = new ServiceRequest(host, "k3s");
    activities.restartService(restart);
    ServiceResult again = activities.restartService(restart);

    assertEquals(new ServiceResult("k3s", true), again);
    assertEquals(1, Files.readAllLines(node.path("/run/systemd/k3s.restarts")).size(), "restarted once");

    stub().stageArtifacts(stageRequest());
    activities.installArtifacts(new InstallRequest(host, PROFILE, List.of(k3s, images)));
    activities.restartService(restart);
    activities.restartService(restart);

    assertEquals(2, Files.readAllLines(node.path("/run/systemd/k3s.restarts")).size(), "restarted once after the swap");
  }

  @Test
  void restartFailureIsServiceRestartFailed() throws Exception {
    Files.createDirectories(node.path("/run/systemd"));
    Files.createFile(node.path("/run/systemd/k3s-agent.fail-restart"));

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.SERVICE_RESTART_FAILED,
            () -> activities.restartService(new ServiceRequest(host, "k3s-agent")));

    assertTrue(
        failure.getOriginalMessage().contains("Job for k3s-agent.service failed"),
        failure.getOriginalMessage());
    assertNoKeyMaterial(failure, node.privateKeyText());
  }

  @Test
  void aHangingScriptIsCutOffByTheActivitysOwnBudgetNotAFixedCap() throws Exception {
    Files.createDirectories(node.path("/run/systemd"));
    Files.createFile(node.path("/run/systemd/k3s.hang-restart"));
    // The connector's default script timeout is a minute; the activity allows 10 s.
    HostActivities tight =
        temporal.newActivityStub(
            HostActivities.class,
            ActivityOptions.newBuilder()
                .setStartToCloseTimeout(Duration.ofSeconds(10))
                .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
                .build());

    long start = System.nanoTime();
    // Retryable (regression, chaos campaign): a hung command's outcome is unknown, so the step is
    // retried like a Temporal timeout, not failed for good as ServiceRestartFailed.
    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.STEP_TIMED_OUT,
            () -> tight.restartService(new ServiceRequest(host, "k3s")));
    assertFalse(failure.isNonRetryable(), failure.toString());
    Duration took = Duration.ofNanos(System.nanoTime() - start);

    assertTrue(
        failure.getOriginalMessage().contains("did not finish within 5s"),
        failure.getOriginalMessage());
    assertTrue(took.compareTo(Duration.ofSeconds(10)) < 0, "took " + took);
  }

  @Test
  void aSlowScriptThatStillPulsesIsNotCutForSilence() throws Exception {
    // The fake restart runs silently for a minute, past the node's 4 s silence limit: only the
    // script's pulse (a newline on stderr every 2 s) keeps it from counting as hung, so it runs
    // until the activity's own 7 s budget ends it (finding 8, docs/reliability.md).
    Files.createDirectories(node.path("/run/systemd"));
    Files.createFile(node.path("/run/systemd/k3s.hang-restart"));
    HostActivities tight =
        temporal.newActivityStub(
            HostActivities.class,
            ActivityOptions.newBuilder()
                .setStartToCloseTimeout(Duration.ofSeconds(12))
                .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
                .build());

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.STEP_TIMED_OUT,
            () -> tight.restartService(new ServiceRequest(host, "k3s")));

    assertTrue(failure.getOriginalMessage().contains("did not finish within 7s"), failure.getOriginalMessage());
    assertFalse(failure.getOriginalMessage().contains("fell silent"), failure.getOriginalMessage());
  }

  @Test
  void aHostStepHeartbeatsWhileItsScriptRunsSoADeadWorkersStepIsRetriedWithinSeconds() throws Exception {
    // Regression (chaos campaign): host steps did not heartbeat, so a worker killed mid-step left the
    // step to its 3-minute start-to-close timeout. Now they beat from a side thread while the script
    // runs; a 2 s heartbeat timeout outlives a script running (hung here) for 7 s.
    Files.createDirectories(node.path("/run/systemd"));
    Files.createFile(node.path("/run/systemd/k3s.hang-restart"));
    List<String> beats = new CopyOnWriteArrayList<>();
    temporal.setActivityHeartbeatListener(String.class, beats::add);
    HostActivities beating =
        temporal.newActivityStub(
            HostActivities.class,
            ActivityOptions.newBuilder()
                .setStartToCloseTimeout(Duration.ofSeconds(12))
                .setHeartbeatTimeout(Duration.ofSeconds(2))
                .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
                .build());

    assertFailure(
        UpgradeFailures.STEP_TIMED_OUT,
        () -> beating.restartService(new ServiceRequest(host, "k3s")));

    assertTrue(beats.size() >= 2, "heartbeats while the script ran: " + beats);
    int after = beats.size();
    Thread.sleep(2500);
    assertEquals(after, beats.size(), "no heartbeat once the step ended: " + beats);
  }

  @Test
  void nonRootUserRunsEveryStepUnderSudo() throws Exception {
    HostAccess deploy = node.access("deploy");

    activities.restartService(new ServiceRequest(deploy, "k3s"));

    assertEquals(List.of("sudo -n bash -s"), node.server().commands());
  }

  @Test
  void etcdSnapshotIsTakenOnceAndFoundOnTheRetry() throws Exception {
    installSnapshottingK3s();
    EtcdSnapshotRequest request = snapshotRequest("inplace-pre-v1.31.2-k3s1");

    EtcdSnapshotResult first = activities.snapshotEtcd(request);
    EtcdSnapshotResult second = activities.snapshotEtcd(request);

    String expected = SNAPSHOT_DIR + "/inplace-pre-v1.31.2-k3s1-edge-1-1700000000";
    assertEquals(new EtcdSnapshotResult("inplace-pre-v1.31.2-k3s1", expected, false), first);
    assertEquals(new EtcdSnapshotResult("inplace-pre-v1.31.2-k3s1", expected, true), second);
    assertTrue(Files.isRegularFile(node.path(expected)));
    assertEquals(
        1, Files.readAllLines(node.path("/run/k3s-snapshot.calls")).size(), "k3s ran once");
  }

  @Test
  void anEarlierSnapshotOfAnotherNameIsNotTakenForOurs() throws Exception {
    installSnapshottingK3s();
    node.writeFile(SNAPSHOT_DIR + "/etcd-snapshot-edge-1-1690000000", new byte[] {1});
    node.writeFile(SNAPSHOT_DIR + "/inplace-pre-v1.31.2-k3s1x-edge-1-1690000000", new byte[] {1});

    EtcdSnapshotResult result =
        activities.snapshotEtcd(snapshotRequest("inplace-pre-v1.31.2-k3s1"));

    assertFalse(result.alreadyTaken());
    assertEquals(SNAPSHOT_DIR + "/inplace-pre-v1.31.2-k3s1-edge-1-1700000000", result.location());
  }

  @Test
  void failingK3sIsEtcdSnapshotFailed() throws Exception {
    installSnapshottingK3s();
    node.writeFile("/run/etcd-down", new byte[0]);

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.ETCD_SNAPSHOT_FAILED,
            () -> activities.snapshotEtcd(snapshotRequest("pre-upgrade")));

    assertTrue(failure.isNonRetryable());
    assertTrue(
        failure.getOriginalMessage().contains("context deadline exceeded"),
        failure.getOriginalMessage());
    assertTrue(
        failure.getOriginalMessage().startsWith("snapshot step 'etcd-snapshot'"),
        failure.getOriginalMessage());
    assertNoKeyMaterial(failure, node.privateKeyText());
  }

  @Test
  void k3sThatSavesNoFileIsEtcdSnapshotFailed() {
    // the default fake k3s exits 0 for anything but --version and writes nothing
    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.ETCD_SNAPSHOT_FAILED,
            () -> activities.snapshotEtcd(snapshotRequest("pre-upgrade")));

    assertTrue(
        failure.getOriginalMessage().contains("no file pre-upgrade-* is in " + SNAPSHOT_DIR),
        failure.getOriginalMessage());
  }

  @Test
  void snapshotIsRefusedForOtherDistributionsAndUnsafeNames() {
    EtcdSnapshotRequest kubeadm =
        new EtcdSnapshotRequest(host, Distribution.KUBEADM, PROFILE, "pre-upgrade");

    assertFailure(UpgradeFailures.INVALID_REQUEST, () -> activities.snapshotEtcd(kubeadm));
    assertFailure(
        UpgradeFailures.INVALID_REQUEST, () -> activities.snapshotEtcd(snapshotRequest("../x")));
    assertFailure(
        UpgradeFailures.INVALID_REQUEST, () -> activities.snapshotEtcd(snapshotRequest("-x")));
    assertTrue(node.server().commands().isEmpty());
  }

  @Test
  void verifyArtifactsFetchesEachIntoTheCacheAndNamesThem() {
    ArtifactCheckResult result =
        activities.verifyArtifacts(new ArtifactCheckRequest(List.of(k3s, images)));

    assertEquals(List.of("k3s", "k3s-airgap-images"), result.verified());
    assertTrue(Files.isRegularFile(work.resolve("cache").resolve(k3s.sha256())));
    assertTrue(node.server().commands().isEmpty(), "no host is involved");
  }

  @Test
  void verifyArtifactsRefusesAMismatchingDigest() throws Exception {
    Artifact wrong =
        new Artifact(
            "k3s",
            ArtifactKind.BINARY,
            k3s.source(),
            sha256(OLD_K3S),
            0,
            k3s.installPath(),
            "0755");

    assertFailure(
        UpgradeFailures.ARTIFACT_DIGEST_MISMATCH,
        () -> activities.verifyArtifacts(new ArtifactCheckRequest(List.of(wrong))));
  }

  /**
   * A k3s whose {@code etcd-snapshot save --name N} writes N-edge-1-1700000000, as k3s names it.
   */
  private void installSnapshottingK3s() throws IOException {
    node.writeFile(
            k3s.installPath(),
            """
            #!/bin/bash
            if [ "$1" = etcd-snapshot ] && [ "$2" = save ] && [ "$3" = --name ]; then
              echo x >> "$INPLACE_HOST_ROOT/run/k3s-snapshot.calls"
              if [ -e "$INPLACE_HOST_ROOT/run/etcd-down" ]; then
                echo 'level=fatal msg="etcd-snapshot error: context deadline exceeded"' >&2
                exit 1
              fi
              dir="$INPLACE_HOST_ROOT%s"
              mkdir -p "$dir"
              echo snapshot > "$dir/$4-edge-1-1700000000"
              echo "INFO[0000] Snapshot $4-edge-1-1700000000 saved."
            fi
            """
                .formatted(SNAPSHOT_DIR)
                .getBytes(StandardCharsets.UTF_8))
        .toFile()
        .setExecutable(true);
    Files.createDirectories(node.path("/run"));
  }

  private EtcdSnapshotRequest snapshotRequest(String name) {
    return new EtcdSnapshotRequest(host, Distribution.K3S, PROFILE, name);
  }

  private HostActivities stub() {
    return temporal.newActivityStub(
        HostActivities.class,
        ActivityOptions.newBuilder()
            .setStartToCloseTimeout(Duration.ofMinutes(1))
            .setHeartbeatTimeout(Duration.ofSeconds(30))
            .setRetryOptions(RetryOptions.newBuilder().setMaximumAttempts(1).build())
            .build());
  }

  private HostFacts preflight() {
    return activities.inspectHost(inspectRequest(NodeRole.CONTROL_PLANE));
  }

  private HostInspectRequest inspectRequest(NodeRole role) {
    return new HostInspectRequest(host, Distribution.K3S, role, PROFILE, List.of(k3s, images));
  }

  private StageRequest stageRequest() {
    return new StageRequest(host, PROFILE, List.of(k3s, images));
  }

  private BackupRequest backupRequest(List<InstalledFile> current) {
    return new BackupRequest(host, PROFILE, current);
  }

  private Path staged(Artifact a) {
    return node.path(PROFILE.stagingDir() + "/" + a.stagedFileName());
  }

  private List<Path> partFiles() throws IOException {
    try (Stream<Path> files = Files.list(node.path(PROFILE.stagingDir()))) {
      return files.filter(p -> p.getFileName().toString().endsWith(".part")).toList();
    }
  }

  private String permissions(String hostPath) throws IOException {
    return PosixFilePermissions.toString(Files.getPosixFilePermissions(node.path(hostPath)));
  }

  private static String expectedArch() {
    String machine = System.getProperty("os.arch");
    return switch (machine) {
      case "amd64", "x86_64" -> "amd64";
      case "aarch64", "arm64" -> "arm64";
      default -> machine;
    };
  }

  private static byte[] imageArchiveBytes() {
    byte[] data = new byte[300_000];
    for (int i = 0; i < data.length; i++) {
      data[i] = (byte) (i * 31 + 7);
    }
    return data;
  }

  static String sha256(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }
}
