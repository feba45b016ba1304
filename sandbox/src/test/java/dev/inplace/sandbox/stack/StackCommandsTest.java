package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The estate runs with both JIT compilers (its SHA-256 needs C2's intrinsic); the others with C1 only. */
class StackCommandsTest {
  private static final String C1_ONLY = "-XX:TieredStopAtLevel=1";

  @TempDir Path dir;

  @Test
  void theEstateRunsWithC2AndTheWorkersAndTemporalWithC1Only() {
    StackLayout layout = new StackLayout(dir);
    List<String> estate = StackCommands.estate(layout, List.of("--workers", "3"), List.of());
    List<String> worker = StackCommands.worker(layout, StackLayout.worker(1), List.of());
    List<String> temporal = StackCommands.temporal(layout, List.of());

    assertFalse(estate.contains(C1_ONLY), estate.toString());
    assertTrue(estate.contains(EstateMain.class.getName()), estate.toString());
    assertTrue(worker.contains(C1_ONLY), worker.toString());
    assertTrue(temporal.contains(C1_ONLY), temporal.toString());
  }
}
