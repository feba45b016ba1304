package dev.inplace.activities.capi;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.temporal.failure.ApplicationFailure;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * What the management cluster confirms for a host: the Machine, its Cluster, the Machine's address
 * and Node, and SSH settings and a layout that an upgrade resource of the cluster, the hook's
 * record on the Machine or the naming convention configure. Each test has its own namespace.
 */
@EnableKubernetesMockClient(crud = true)
class HostAuthorityTest {
  static KubernetesClient management;

  private static final HostProfile K3S = HostProfile.k3sDefaults();

  private HostAuthority authority() {
    return new HostAuthority(management);
  }

  private static HostAccess access(String ns, SshSettings ssh) {
    return new HostAccess(ns, "node-1", "10.0.0.1", ssh, "c1", "c1-m1");
  }

  private static SshSettings ssh(String key, String knownHosts, String jumpHost) {
    return new SshSettings("deploy", 2222, key, knownHosts, jumpHost);
  }

  private static ApplicationFailure refusal(Runnable call) {
    ApplicationFailure f = assertThrows(ApplicationFailure.class, call::run);
    assertTrue(f.isNonRetryable(), f.toString());
    return f;
  }

  @Test
  void theConventionalSecretsAndTheStandardLayoutAreConfirmedOnEitherKindOfHost() {
    HostRecords.machine(management, "ns-convention", "c1", "c1-m1", "node-1", "10.0.0.1");
    HostAccess asked = access("ns-convention", ssh("c1-ssh-key", "c1-known-hosts", null));

    HostAccess confirmed = authority().confirm(asked, Distribution.K3S, K3S);
    authority().confirm(asked, Distribution.K3S, K3S.withOs(HostOs.KAIROS));

    assertEquals(asked, confirmed);
  }

  @Test
  void anInputFromBeforeTheMachineNameIsConfirmedThroughItsNodesMachine() {
    HostRecords.machine(management, "ns-old", "c1", "c1-m1", "node-1", "10.0.0.1");
    HostAccess old = new HostAccess("ns-old", "node-1", "10.0.0.1", ssh("c1-ssh-key", "c1-known-hosts", null));

    HostAccess confirmed = authority().confirm(old, Distribution.K3S, K3S);

    assertEquals("c1-m1", confirmed.machineName());
    assertEquals("c1", confirmed.clusterName());
  }

  @Test
  void theSshSettingsAndHostProfileAnUpgradeResourceOfTheClusterNamesAreConfirmed() {
    HostRecords.machine(management, "ns-cr", "c1", "c1-m1", "node-1", "10.0.0.1");
    HostRecords.hostProfile(management, "opt-bin", Map.of("binDir", "/opt/bin"));
    HostRecords.upgradeResource(management, "WorkersUpgrade", "ns-cr", "u1", Map.of(
        "clusterName", "c1",
        "ssh", Map.of("user", "deploy", "port", 2222, "privateKeySecret", "fleet-key",
            "knownHostsSecret", "fleet-hosts", "jumpHost", "bastion.example:22"),
        "hostProfile", Map.of("name", "opt-bin")));
    HostProfile optBin = new HostProfile("/opt/bin", K3S.imagesDir(), K3S.stagingDir(), K3S.backupDir(),
        K3S.serverService(), K3S.agentService());
    HostAccess asked = access("ns-cr", ssh("fleet-key", "fleet-hosts", "bastion.example:22"));

    authority().confirm(asked, Distribution.K3S, optBin);

    // The standard layout is not the one that resource names.
    ApplicationFailure standard = refusal(() -> authority().confirm(asked, Distribution.K3S, K3S));
    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, standard.getType());
    assertTrue(standard.getOriginalMessage().contains("(WorkersUpgrade ns-cr/u1 (InplaceHostProfile opt-bin), k3s)"),
        standard.getOriginalMessage());
    // Another port than the resource's is another access.
    ApplicationFailure port = refusal(() -> authority().confirm(
        access("ns-cr", new SshSettings("deploy", 22, "fleet-key", "fleet-hosts", "bastion.example:22")),
        Distribution.K3S, optBin));
    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, port.getType());
  }

  @Test
  void anUpgradeResourceOfAnotherClusterConfiguresNothingForThisOne() {
    HostRecords.machine(management, "ns-other", "c1", "c1-m1", "node-1", "10.0.0.1");
    HostRecords.upgradeResource(management, "ControlPlaneUpgrade", "ns-other", "u2", Map.of(
        "clusterName", "c2",
        "ssh", Map.of("privateKeySecret", "c2-key", "knownHostsSecret", "c2-hosts")));

    ApplicationFailure f = refusal(() -> authority().confirm(
        new HostAccess("ns-other", "node-1", "10.0.0.1", new SshSettings("root", 22, "c2-key", "c2-hosts", null), "c1",
            "c1-m1"), Distribution.K3S, K3S));

    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, f.getType());
    assertEquals("SSH settings (key Secret c2-key, known_hosts Secret c2-hosts, user root, port 22) are not ones"
        + " cluster ns-other/c1's resources configure for Machine ns-other/c1-m1 (the convention"
        + " c1-ssh-key/c1-known-hosts): a run's input does not choose the Secrets", f.getOriginalMessage());
  }

  @Test
  void theHooksRecordOnTheMachineConfirmsTheSettingsItGaveTheRun() {
    HostRecords.machine(management, "ns-hook", "c1", "c1-m1", "node-1", "10.0.0.1");
    management.genericKubernetesResources(CapiResources.MACHINE).inNamespace("ns-hook").withName("c1-m1")
        .edit(m -> {
          m.getMetadata().setAnnotations(Map.of(ClusterApiActivities.HOST_ACCESS_ANNOTATION,
              "{\"user\":\"deploy\",\"port\":2222,\"privateKeySecret\":\"hook-key\",\"knownHostsSecret\":\"hook-hosts\","
                  + "\"distribution\":\"KUBEADM\",\"os\":\"standard\"}"));
          return m;
        });

    authority().confirm(access("ns-hook", ssh("hook-key", "hook-hosts", null)), Distribution.KUBEADM,
        HostProfile.kubeadmDefaults());

    ApplicationFailure k3s = refusal(() -> authority().confirm(access("ns-hook", ssh("hook-key", "hook-hosts", null)),
        Distribution.K3S, K3S));
    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, k3s.getType());
  }

  @Test
  void aMachineWhoseClusterIsGoneIsRefused() {
    HostRecords.machine(management, "ns-gone", "c1", "c1-m1", "node-1", "10.0.0.1");
    management.genericKubernetesResources(CapiResources.CLUSTER).inNamespace("ns-gone").withName("c1").delete();

    ApplicationFailure f = refusal(() -> authority().confirm(
        access("ns-gone", ssh("c1-ssh-key", "c1-known-hosts", null)), Distribution.K3S, K3S));

    assertEquals(UpgradeFailures.CLUSTER_NOT_FOUND, f.getType());
    assertEquals("Cluster ns-gone/c1 (of Machine ns-gone/c1-m1) not found", f.getOriginalMessage());
  }

  @Test
  void aMachineOfAnotherClusterIsRefused() {
    HostRecords.machine(management, "ns-two", "c1", "c1-m1", "node-1", "10.0.0.1");

    ApplicationFailure f = refusal(() -> authority().confirm(new HostAccess("ns-two", "node-1", "10.0.0.1",
        ssh("c9-ssh-key", "c9-known-hosts", null), "c9", "c1-m1"), Distribution.K3S, K3S));

    assertEquals(UpgradeFailures.HOST_ACCESS_MISMATCH, f.getType());
    assertEquals("Machine ns-two/c1-m1 belongs to cluster c1, not c9", f.getOriginalMessage());
  }
}
