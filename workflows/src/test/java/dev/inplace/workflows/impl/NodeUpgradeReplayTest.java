package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertFalse;

import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.WorkflowReplayer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replays committed histories of released NodeUpgrade runs against the current implementation: a
 * change that would break running workflows fails here and must go behind {@code
 * Workflow.getVersion}. Histories are regenerated with {@code -Dhistories.update=true} (see
 * NodeUpgradeWorkflowTest#recordReplayHistories) only when a change is deliberately versioned.
 */
class NodeUpgradeReplayTest {
  private static final Path HISTORIES = Path.of("src/test/resources/histories");

  static List<Path> histories() throws Exception {
    try (Stream<Path> files = Files.list(HISTORIES)) {
      List<Path> found = files.filter(p -> p.getFileName().toString().startsWith("node-upgrade-")).sorted().toList();
      assertFalse(found.isEmpty(), "no committed NodeUpgrade histories in " + HISTORIES);
      return found;
    }
  }

  @ParameterizedTest
  @MethodSource("histories")
  void replaysCommittedHistoryWithoutNonDeterminism(Path history) throws Exception {
    WorkflowReplayer.replayWorkflowExecution(
        WorkflowExecutionHistory.fromJson(Files.readString(history)), NodeUpgradeWorkflowImpl.class);
  }
}
