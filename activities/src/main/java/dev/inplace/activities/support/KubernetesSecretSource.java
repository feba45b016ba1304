package dev.inplace.activities.support;

import dev.inplace.activities.kube.KubeFailures;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.nio.charset.StandardCharsets;
import java.util.Base64;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reads Secrets from the management cluster. Values stay in memory; only names reach messages. */
public final class KubernetesSecretSource implements SecretSource {
  private final KubernetesClient management;

  public KubernetesSecretSource(KubernetesClient management) {
    this.management = management;
  }

  @Override
  public Map<String, byte[]> read(String namespace, String name) {
    String what = "Secret " + namespace + "/" + name;
    Secret secret;
    try {
      secret = management.secrets().inNamespace(namespace).withName(name).get();
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(e, UpgradeFailures.SECRET_NOT_FOUND, what);
    }
    if (secret == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.SECRET_NOT_FOUND, what + " not found");
    }
    Map<String, byte[]> data = new LinkedHashMap<>();
    if (secret.getData() != null) {
      Base64.Decoder decoder = Base64.getDecoder();
      secret.getData().forEach((key, value) -> data.put(key, decoder.decode(value)));
    }
    // stringData is write-only on a real API server, but the mock stores it as given.
    if (secret.getStringData() != null) {
      secret
          .getStringData()
          .forEach((key, value) -> data.putIfAbsent(key, value.getBytes(StandardCharsets.UTF_8)));
    }
    return Map.copyOf(data);
  }
}
