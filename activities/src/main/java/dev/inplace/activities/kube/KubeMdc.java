package dev.inplace.activities.kube;

import java.util.LinkedHashMap;
import java.util.Map;
import org.slf4j.MDC;

/**
 * Puts keys such as {@code cluster} and {@code node} into the SLF4J MDC for one activity call and
 * restores what was there before on close.
 */
public final class KubeMdc implements AutoCloseable {
  private final Map<String, String> previous = new LinkedHashMap<>();

  private KubeMdc(String... keysAndValues) {
    if (keysAndValues.length % 2 != 0) {
      throw new IllegalArgumentException("keys and values must come in pairs");
    }
    for (int i = 0; i < keysAndValues.length; i += 2) {
      previous.put(keysAndValues[i], MDC.get(keysAndValues[i]));
      MDC.put(keysAndValues[i], keysAndValues[i + 1]);
    }
  }

  /** {@code KubeMdc.of("cluster", "ns/c1", "node", "w1")}. */
  public static KubeMdc of(String... keysAndValues) {
    return new KubeMdc(keysAndValues);
  }

  @Override
  public void close() {
    previous.forEach(
        (key, value) -> {
          if (value == null) {
            MDC.remove(key);
          } else {
            MDC.put(key, value);
          }
        });
  }
}
