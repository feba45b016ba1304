package dev.inplace.sandbox.infra;

import dev.inplace.sandbox.hosts.KubeletSimulator;
import dev.inplace.sandbox.hosts.SandboxHost;
import dev.inplace.sandbox.hosts.SandboxHosts;
import dev.inplace.sandbox.release.FakeReleases;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.Map;

/**
 * A Machine booted onto a sandbox SSH host of its own: the host is provisioned (its own
 * {@code 127.0.0.N}, the release of the Machine's {@code spec.version} installed from the fake
 * releases), the Node registered as kubeadm would leave it ({@link KubeadmNodeBoot}, with the host's
 * address as InternalIP), and from then on the {@link KubeletSimulator} reports on that Node the
 * version of the kubelet binary actually installed on the host. Each boot rewrites the cluster's
 * known_hosts Secret on the management cluster with every host's key, as an operator pinning the
 * keys of new machines would.
 *
 * <p>What is simulated: the host (a directory and an SSH server running real shell commands, the
 * kubelet, kubeadm and systemctl being the sandbox's stand-ins), and the kubelet (the simulator
 * writes the Node status). The Node, its labels, taint and providerID are real objects on the real
 * workload API server.
 */
public final class SandboxHostBoot implements MachineBoot {
  private final SandboxHosts hosts;
  private final FakeReleases releases;
  private final KubeadmNodeBoot nodes;
  private final KubeletSimulator kubelets;
  private final KubernetesClient management;
  private final String cluster;
  private final String knownHostsSecret;

  /**
   * @param cluster the cluster whose Machines are booted (the known_hosts Secret's label)
   * @param knownHostsSecret the Secret, in each Machine's namespace, that holds every host's key
   */
  public SandboxHostBoot(
      SandboxHosts hosts, FakeReleases releases, KubeadmNodeBoot nodes, KubeletSimulator kubelets,
      KubernetesClient management, String cluster, String knownHostsSecret) {
    this.hosts = hosts;
    this.releases = releases;
    this.nodes = nodes;
    this.kubelets = kubelets;
    this.management = management;
    this.cluster = cluster;
    this.knownHostsSecret = knownHostsSecret;
  }

  @Override
  public String boot(String namespace, String machine, String providerID, String version, boolean controlPlane, boolean first) {
    SandboxHost host = hosts.provision(machine, controlPlane ? NodeRole.CONTROL_PLANE : NodeRole.WORKER, version, releases);
    publishKnownHosts(namespace);
    nodes.boot(namespace, machine, providerID, version, controlPlane, first, host.address());
    kubelets.add(host.simulatedNode());
    return host.address();
  }

  @Override
  public void shutdown(String namespace, String machine) {
    nodes.shutdown(namespace, machine);
    hosts.drop(machine);
  }

  private void publishKnownHosts(String namespace) {
    String text = Base64.getEncoder().encodeToString(hosts.knownHosts().getBytes(StandardCharsets.UTF_8));
    management.secrets().inNamespace(namespace).resource(new SecretBuilder().withNewMetadata().withName(knownHostsSecret)
        .withNamespace(namespace).withLabels(Map.of("cluster.x-k8s.io/cluster-name", cluster)).endMetadata()
        .withType("Opaque").withData(Map.of(SshSettings.KNOWN_HOSTS_DATA_KEY, text)).build()).serverSideApply();
  }
}
