package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Sticky execution is turned off only where a stack's worker may be killed on Temporal's test server. */
class LocalStackWorkerEnvironmentTest {
  @TempDir Path dir;

  @Test
  void workersThatMayBeKilledRunWithoutStickyExecution() {
    Map<String, String> env =
        LocalStack.workerEnvironment(new StackLayout(dir), new LocalStack.Spec(2, List.of(), false), 1);
    assertEquals("0", env.get("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS"));
  }

  @Test
  void workersThatMayBeKilledKeepStickyExecutionOnTheDevServerWhichFallsBackFromADeadWorker() {
    Map<String, String> env = LocalStack.workerEnvironment(
        new StackLayout(dir), new LocalStack.Spec(2, List.of(), false, true, TemporalServer.DEV_SERVER), 1);
    assertFalse(env.containsKey("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS"));
    assertEquals(StackLayout.temporalAddress(), env.get("TEMPORAL_ADDRESS"));
    assertEquals("default", env.get("TEMPORAL_NAMESPACE"));
  }

  @Test
  void aWorkerThatLivesToTheEndKeepsTheProductionDefault() {
    Map<String, String> env =
        LocalStack.workerEnvironment(new StackLayout(dir), new LocalStack.Spec(1, List.of(), false, false), 1);
    assertFalse(env.containsKey("INPLACE_STICKY_SCHEDULE_TO_START_SECONDS"));
    assertEquals(StackLayout.temporalAddress(), env.get("TEMPORAL_ADDRESS"));
  }
}
