package dev.inplace.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.worker.watch.WatcherOptions;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;

class WorkerMainTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private OptionalInt preflight(List<String> args, Map<String, String> env) {
    return WorkerMain.preflight(
        args, env, new PrintStream(out, true, StandardCharsets.UTF_8), new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  @Test
  void withoutTemporalAddressTheWorkerRefusesToStartNamingTheVariable() {
    assertEquals(OptionalInt.empty(), preflight(List.of(), Map.of()));
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> WorkerConfig.fromEnvironment(
            Map.of("TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml"), warning -> {}));
    assertTrue(e.getMessage().contains("TEMPORAL_ADDRESS"), e.getMessage());
  }

  @Test
  void helpPrintsEveryKeyTheWorkerReadsAndExitsZeroWithoutAnAddress() {
    assertEquals(OptionalInt.of(0), preflight(List.of("--help"), Map.of()));
    String usage = out.toString(StandardCharsets.UTF_8);
    assertTrue(usage.startsWith("usage: inplace worker"), usage);
    for (String key : WorkerEnvironment.KEYS) {
      assertTrue(usage.contains(key), "usage does not name " + key);
    }
  }

  @Test
  void anArgumentIsAUsageError() {
    assertEquals(OptionalInt.of(2), preflight(List.of("--temporal", "x"), Map.of("TEMPORAL_ADDRESS", "t:7233")));
    assertTrue(err.toString(StandardCharsets.UTF_8).contains("takes no arguments"));
  }

  @Test
  void theKnownKeysAreTheConfigClassesOwnListsAndTheLogLevel() {
    assertTrue(WorkerEnvironment.KEYS.containsAll(WorkerConfig.KEYS));
    assertTrue(WorkerEnvironment.KEYS.containsAll(WatcherOptions.KEYS));
    assertTrue(WorkerEnvironment.KEYS.containsAll(ExtensionOptions.KEYS));
    assertTrue(WorkerEnvironment.KEYS.contains("INPLACE_LOG_LEVEL"));
    assertTrue(WorkerEnvironment.KEYS.contains("INPLACE_LOG_FORMAT"));
    assertTrue(WorkerEnvironment.KEYS.containsAll(PollerOptions.KEYS));
    assertTrue(WorkerEnvironment.KEYS.containsAll(dev.inplace.worker.intake.ArtifactSettings.KEYS));
    assertTrue(WorkerEnvironment.KEYS.contains(dev.inplace.client.PayloadEncryption.KEY_FILE));
    assertEquals(
        WorkerConfig.KEYS.size() + WatcherOptions.KEYS.size() + ExtensionOptions.KEYS.size()
            + dev.inplace.worker.intake.ArtifactSettings.KEYS.size() + dev.inplace.client.PayloadEncryption.KEYS.size()
            + PollerOptions.KEYS.size() + 2,
        WorkerEnvironment.KEYS.size());
  }
}
