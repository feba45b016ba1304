package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactCache;
import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.activities.capi.HostAuthority;
import dev.inplace.activities.capi.HostRecords;
import dev.inplace.activities.ssh.SimulatedNode;
import dev.inplace.activities.ssh.SshClientOptions;
import dev.inplace.activities.ssh.SshConnector;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.temporal.failure.ApplicationFailure;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Function;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A host step does not take its request's word for the host (issue 34, H4): against a real SSH
 * server that would accept the connection, a request the management cluster does not confirm is
 * refused with its specific type and reason, non-retryable, before any Secret is read and before
 * any SSH session is opened.
 */
@EnableKubernetesMockClient(crud = true)
class HostActivitiesConfirmHostTest {
  static KubernetesClient management;

  @TempDir Path dir;
  private SimulatedNode node;
  private HostActivitiesImpl activities;
  private final AtomicInteger secretReads = new AtomicInteger();

  @BeforeEach
  void setUp() throws Exception {
    node = new SimulatedNode(dir);
    // The management cluster: Cluster team-a/edge, its Machine edge-cp-1 whose Node edge-1 is at 127.0.0.1.
    HostRecords.machine(management, SimulatedNode.NAMESPACE, "edge", "edge-cp-1", "edge-1", "127.0.0.1");
    // A Machine of the same cluster elsewhere, whose address the server is not at.
    HostRecords.machine(management, SimulatedNode.NAMESPACE, "edge", "edge-cp-2", "edge-2", "127.0.0.2");
    SshConnector ssh = new SshConnector((namespace, name) -> {
      secretReads.incrementAndGet();
      return node.secrets().read(namespace, name);
    }, SshClientOptions.defaults());
    activities = new HostActivitiesImpl(ssh, new HostAuthority(management),
        new ArtifactCache(dir.resolve("cache"), ArtifactSourcePolicy.httpsOnly()), HostDistribution.k3s());
  }

  @AfterEach
  void tearDown() throws Exception {
    node.close();
  }

  /** The access a run of Machine edge-cp-1 asks for, with the conventional Secrets (edge-ssh-key). */
  private HostAccess real() {
    HostAccess a = node.access("root");
    return new HostAccess(a.secretNamespace(), a.nodeName(), a.address(), a.ssh(), "edge", "edge-cp-1");
  }

  private ApplicationFailure refusedInspect(HostAccess host, HostProfile profile) {
    return refused(h -> activities.inspectHost(
        new HostActivities.HostInspectRequest(h, Distribution.K3S, NodeRole.CONTROL_PLANE, profile, List.of())), host);
  }

  private ApplicationFailure refused(Function<HostAccess, ?> step, HostAccess host) {
    ApplicationFailure f = assertThrows(ApplicationFailure.class, () -> step.apply(host));
    assertTrue(f.isNonRetryable(), f.toString());
    assertEquals(0, secretReads.get(), "Secrets read");
    assertEquals(0, node.server().sessionsOpened(), "SSH sessions opened");
    return f;
  }

  @Test
  void anAddressThatIsNotTheMachinesIsRefusedBeforeAnySecretOrSshSession() {
    // The run names Machine edge-cp-2 (at 127.0.0.2) but the address of another host, where a server listens.
    HostAccess asked = new HostAccess(SimulatedNode.NAMESPACE, "edge-2", "127.0.0.1", real().ssh(), "edge", "edge-cp-2");

    ApplicationFailure f = refusedInspect(asked, HostProfile.k3sDefaults());

    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, f.getType());
    assertEquals("address 127.0.0.1 is not one of Machine team-a/edge-cp-2's addresses [127.0.0.2]: a run's input"
        + " does not choose the host", f.getOriginalMessage());
  }

  @Test
  void aSecretNamespaceThatIsNotTheClustersIsRefusedBeforeAnySecretIsRead() {
    HostAccess r = real();
    HostAccess asked = new HostAccess("kube-system", r.nodeName(), r.address(), r.ssh(), "edge", "edge-cp-1");

    ApplicationFailure f = refusedInspect(asked, HostProfile.k3sDefaults());

    assertEquals(UpgradeFailures.MACHINE_NOT_FOUND, f.getType());
    assertEquals("Machine kube-system/edge-cp-1 not found: a step acts only on a Machine of the management cluster,"
        + " and reads Secrets only in its Cluster's namespace", f.getOriginalMessage());
  }

  @Test
  void aMadeUpMachineIsRefused() {
    HostAccess r = real();
    HostAccess asked = new HostAccess(r.secretNamespace(), r.nodeName(), r.address(), r.ssh(), "edge", "edge-cp-9");

    ApplicationFailure f = refusedInspect(asked, HostProfile.k3sDefaults());

    assertEquals(UpgradeFailures.MACHINE_NOT_FOUND, f.getType());
    assertTrue(f.getOriginalMessage().startsWith("Machine team-a/edge-cp-9 not found"), f.getOriginalMessage());
  }

  @Test
  void aMadeUpNodeNameWithoutAMachineNameFindsNoMachine() {
    HostAccess asked = new HostAccess(SimulatedNode.NAMESPACE, "intruder", "127.0.0.1", real().ssh());

    ApplicationFailure f = refusedInspect(asked, HostProfile.k3sDefaults());

    assertEquals(UpgradeFailures.MACHINE_NOT_FOUND, f.getType());
    assertEquals("no Machine in namespace team-a has Node intruder: a step acts only on a Machine of the management"
        + " cluster", f.getOriginalMessage());
  }

  @Test
  void aHostLayoutNoResourceOfTheClusterNamesIsRefusedEvenOnTheAllowlist() {
    HostProfile k3s = HostProfile.k3sDefaults();
    HostProfile optBin = new HostProfile("/opt/bin", k3s.imagesDir(), k3s.stagingDir(), k3s.backupDir(),
        k3s.serverService(), k3s.agentService());

    ApplicationFailure f = refusedInspect(real(), optBin);

    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, f.getType());
    assertTrue(f.getOriginalMessage().startsWith("host layout (binDir /opt/bin, imagesDir"
        + " /var/lib/rancher/k3s/agent/images, stagingDir /var/lib/inplace/staging, backupDir /var/lib/inplace/backup,"
        + " services k3s/k3s-agent, os standard) is not one cluster team-a/edge's resources name for Machine"
        + " team-a/edge-cp-1"), f.getOriginalMessage());
  }

  @Test
  void secretsTheClustersResourcesDoNotNameAreRefused() {
    HostAccess r = real();
    HostAccess asked = new HostAccess(r.secretNamespace(), r.nodeName(), r.address(),
        new dev.inplace.workflows.api.SshSettings("root", r.ssh().port(), "other-team-key", "edge-known-hosts", null),
        "edge", "edge-cp-1");

    ApplicationFailure f = refused(h -> activities.restoreBinaries(
        new HostActivities.RestoreRequest(h, HostProfile.k3sDefaults(), List.of(), List.of())), asked);

    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, f.getType());
    assertTrue(f.getOriginalMessage().startsWith("SSH settings (key Secret other-team-key, known_hosts Secret"
        + " edge-known-hosts, user root, port " + r.ssh().port() + ") are not ones cluster team-a/edge's resources"
        + " configure for Machine team-a/edge-cp-1"), f.getOriginalMessage());
  }

  @Test
  void aServiceNoLayoutOfTheClusterNamesIsNotRestarted() {
    ApplicationFailure f = refused(h -> activities.restartService(
        new HostActivities.ServiceRequest(h, "sshd", Distribution.K3S)), real());

    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, f.getType());
    assertTrue(f.getOriginalMessage().startsWith("service sshd is not one cluster team-a/edge's resources name"),
        f.getOriginalMessage());
  }
}
