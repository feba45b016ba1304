package dev.inplace.activities.ssh;

import dev.inplace.activities.support.SecretSource;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** Secrets held in a map, keyed "namespace/name", answering like the real source when missing. */
public final class MapSecretSource implements SecretSource {
  private final Map<String, Map<String, byte[]>> secrets = new ConcurrentHashMap<>();

  public MapSecretSource put(String namespace, String name, Map<String, byte[]> data) {
    secrets.put(namespace + "/" + name, Map.copyOf(data));
    return this;
  }

  @Override
  public Map<String, byte[]> read(String namespace, String name) {
    Map<String, byte[]> data = secrets.get(namespace + "/" + name);
    if (data == null) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.SECRET_NOT_FOUND, "Secret " + namespace + "/" + name + " not found");
    }
    return data;
  }
}
