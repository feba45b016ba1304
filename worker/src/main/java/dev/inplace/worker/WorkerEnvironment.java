package dev.inplace.worker;

import dev.inplace.client.PayloadEncryption;
import dev.inplace.worker.intake.ArtifactSettings;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.worker.watch.WatcherOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Every environment variable the worker process reads, in one place: the usage of
 * {@code inplace worker --help} and the check of deploy/'s Deployment both come from here, so a key
 * the code does not read cannot hide in a manifest.
 */
public final class WorkerEnvironment {
  /** Read by logback (worker/src/main/resources/logback.xml), not by a config class. */
  public static final String LOG_LEVEL = "INPLACE_LOG_LEVEL";
  /** Read by logback too: {@code text} (default) or {@code json} (docs/observability.md). */
  public static final String LOG_FORMAT = "INPLACE_LOG_FORMAT";

  /** The keys by what reads them, in the order the usage prints them. */
  public static final Map<String, List<String>> GROUPS = groups();

  /** Every key, once. */
  public static final List<String> KEYS =
      GROUPS.values().stream().flatMap(List::stream).distinct().toList();

  private WorkerEnvironment() {}

  private static Map<String, List<String>> groups() {
    Map<String, List<String>> groups = new LinkedHashMap<>();
    groups.put("Temporal, task queue, artifacts, management cluster", WorkerConfig.KEYS);
    groups.put("custom resource watcher and leader election", WatcherOptions.KEYS);
    groups.put("CAPI runtime extension", ExtensionOptions.KEYS);
    groups.put("release catalogue sources", ArtifactSettings.KEYS);
    groups.put("payload encryption", PayloadEncryption.KEYS);
    groups.put("polling (the local stack of processes only)", PollerOptions.KEYS);
    groups.put("logging", List.of(LOG_LEVEL, LOG_FORMAT));
    return java.util.Collections.unmodifiableMap(groups);
  }

  /** {@code inplace worker --help}. */
  public static String usage() {
    List<String> lines = new ArrayList<>();
    lines.add("usage: inplace worker");
    lines.add("  Runs the worker: polls Temporal's task queue for node, control-plane and workers runs,");
    lines.add("  watches ControlPlaneUpgrade and WorkersUpgrade resources (one active watcher per Lease)");
    lines.add("  and, when enabled, serves the CAPI runtime extension. Runs until terminated.");
    lines.add("  Configured only through the environment (docs/configuration.md); "
        + dev.inplace.client.TemporalSettings.ADDRESS + " (or a profile file giving an address) is required.");
    lines.add("");
    lines.add("environment:");
    GROUPS.forEach(
        (group, keys) -> {
          lines.add("  " + group + ":");
          StringBuilder line = new StringBuilder("   ");
          for (String key : keys) {
            if (line.length() + key.length() > 96) {
              lines.add(line.toString());
              line = new StringBuilder("   ");
            }
            line.append(' ').append(key);
          }
          lines.add(line.toString());
        });
    return String.join("\n", lines) + "\n";
  }
}
