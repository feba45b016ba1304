package dev.inplace.starter;

import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.api.model.SecretBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * The known_hosts Secret the product pins host keys from (data key {@code known_hosts}, {@link
 * SshSettings#KNOWN_HOSTS_DATA_KEY}), in the cluster's namespace. Written in one request: created
 * when missing, else replaced at the resourceVersion read (a concurrent change fails the write
 * rather than being lost).
 */
final class KnownHostsSecret {
  private final KubernetesClient management;
  private final String namespace;
  private final String name;

  KnownHostsSecret(KubernetesClient management, String namespace, String name) {
    this.management = management;
    this.namespace = namespace;
    this.name = name;
  }

  String describe() {
    return "Secret " + namespace + "/" + name;
  }

  /** The Secret as it is, or null when there is none. */
  Secret read() {
    return management.secrets().inNamespace(namespace).withName(name).get();
  }

  /** The known_hosts text of {@code secret} (empty when it has none). */
  static String knownHosts(Secret secret) {
    String value = secret == null || secret.getData() == null ? null : secret.getData().get(SshSettings.KNOWN_HOSTS_DATA_KEY);
    return value == null ? "" : new String(Base64.getDecoder().decode(value), StandardCharsets.UTF_8);
  }

  /**
   * Writes {@code existing}'s known_hosts with the lines for {@code replaced} host patterns swapped
   * for {@code lines} ({@link KnownHostsText#merge}); other data keys are kept.
   */
  void write(Secret existing, Set<String> replaced, List<String> lines) {
    String text = KnownHostsText.merge(knownHosts(existing), replaced, lines);
    String encoded = Base64.getEncoder().encodeToString(text.getBytes(StandardCharsets.UTF_8));
    if (existing == null) {
      management.secrets().inNamespace(namespace).resource(new SecretBuilder()
          .withNewMetadata().withName(name).withNamespace(namespace).endMetadata()
          .withType("Opaque").addToData(SshSettings.KNOWN_HOSTS_DATA_KEY, encoded).build()).create();
      return;
    }
    Map<String, String> data = new HashMap<>(existing.getData() == null ? Map.of() : existing.getData());
    data.put(SshSettings.KNOWN_HOSTS_DATA_KEY, encoded);
    Secret updated = new SecretBuilder(existing).withData(data).withStringData(null).build();
    management.secrets().inNamespace(namespace).resource(updated).update();
  }
}
