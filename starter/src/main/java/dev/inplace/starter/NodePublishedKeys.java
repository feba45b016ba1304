package dev.inplace.starter;

import dev.inplace.workflows.api.ClusterRef;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The keys each node published on its own Node object (annotation {@link #ANNOTATION}, one {@code
 * TYPE BASE64} line per key), written at boot by the bootstrap snippet inplace ships
 * (deploy/bootstrap/publish-host-keys.sh) with the node's own kubelet credentials: the Node
 * authorizer and NodeRestriction let a node write only its own Node. Read from the workload
 * cluster through the {@code <cluster>-kubeconfig} Secret. A host is trusted when it shows at least
 * one published key and no key that contradicts one (same type, other key); only the published
 * keys it shows are pinned.
 */
final class NodePublishedKeys implements HostKeyTrust {
  static final String ANNOTATION = "upgrade.inplace.dev/ssh-host-keys";

  /** Published annotation text by Node name; a Node that is missing has no entry. */
  private final Map<String, Optional<String>> published;

  NodePublishedKeys(Map<String, Optional<String>> published) {
    this.published = published;
  }

  /**
   * Reads the Nodes of {@code hosts} from {@code cluster}'s workload cluster.
   *
   * @throws HostsScanRefused when the workload cluster cannot be reached or its kubeconfig is refused
   */
  static NodePublishedKeys read(KubernetesClient management, ClusterRef cluster, List<ClusterHosts.Host> hosts) {
    io.fabric8.kubernetes.client.Config config;
    try {
      config = WorkloadKubeconfig.fromSecret(management, cluster.namespace(), cluster.name());
    } catch (WorkloadKubeconfig.Refused e) {
      throw new HostsScanRefused("--from-node-annotations reads the Nodes of the workload cluster: " + e.getMessage());
    }
    Map<String, Optional<String>> published = new HashMap<>();
    try (KubernetesClient workload = new KubernetesClientBuilder().withConfig(config).build()) {
      for (ClusterHosts.Host host : hosts) {
        Node node = workload.nodes().withName(host.node()).get();
        if (node != null) {
          Map<String, String> annotations = node.getMetadata().getAnnotations();
          published.put(host.node(), Optional.ofNullable(annotations == null ? null : annotations.get(ANNOTATION)));
        }
      }
    } catch (RuntimeException e) {
      throw new HostsScanRefused("workload cluster " + cluster + " cannot be read: " + CliErrors.rootMessage(e));
    }
    return new NodePublishedKeys(published);
  }

  @Override
  public Decision decide(ClusterHosts.Host host, List<HostKey> shown) {
    Optional<String> text = published.get(host.node());
    if (text == null) {
      return Decision.refuse("Node " + host.node() + " not found in the workload cluster");
    }
    List<HostKey> keys = text.map(t -> t.lines().map(HostKey::parse).flatMap(Optional::stream).toList())
        .orElse(List.of());
    if (keys.isEmpty()) {
      return Decision.refuse("Node " + host.node() + " publishes no host key (annotation " + ANNOTATION
          + "): add the bootstrap snippet (docs/host-keys.md), or confirm with --expect");
    }
    List<HostKey> contradicted = shown.stream()
        .filter(k -> keys.stream().anyMatch(p -> p.type().equals(k.type()) && !p.equals(k))).toList();
    if (!contradicted.isEmpty()) {
      return Decision.refuse("MISMATCH: it shows " + HostKeyTrust.describe(contradicted) + " but Node " + host.node()
          + " published " + HostKeyTrust.describe(keys));
    }
    List<HostKey> trusted = shown.stream().filter(keys::contains).toList();
    if (trusted.isEmpty()) {
      return Decision.refuse("it shows " + HostKeyTrust.describe(shown) + ", none of the keys Node " + host.node()
          + " published (" + HostKeyTrust.describe(keys) + ")");
    }
    return Decision.trust(trusted);
  }

  @Override
  public String name() {
    return "node annotation";
  }
}
