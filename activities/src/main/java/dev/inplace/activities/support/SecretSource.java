package dev.inplace.activities.support;

import java.util.Map;

/**
 * Reads Secrets of the management cluster. The only way activities obtain key material: values are
 * used in memory and never logged, heartbeated or returned.
 */
public interface SecretSource {

  /**
   * Returns the Secret's data, base64-decoded, keyed by data key.
   *
   * @throws io.temporal.failure.ApplicationFailure of type {@code SecretNotFound} (non-retryable)
   *     when the Secret does not exist
   */
  Map<String, byte[]> read(String namespace, String name);
}
