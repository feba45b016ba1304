package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.testing.WorkflowReplayer;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replays committed histories of ControlPlaneUpgrade and WorkersUpgrade runs (with a halt, Updates
 * and a continue-as-new) against the current implementations: a change that would break running
 * workflows fails here and must go behind {@code Workflow.getVersion}. Histories are regenerated with
 * {@code -Dhistories.update=true} (the {@code recordReplayHistories} tests) only when a change is
 * deliberately versioned.
 */
class ParentUpgradeReplayTest {
  private static final Path HISTORIES = Path.of("src/test/resources/histories");

  static List<Path> histories() throws Exception {
    try (Stream<Path> files = Files.list(HISTORIES)) {
      List<Path> found =
          files.filter(p -> implementationFor(p) != null).sorted().toList();
      assertEquals(3, found.size(), "committed parent histories in " + HISTORIES + ": " + found);
      return found;
    }
  }

  static Class<?> implementationFor(Path history) {
    String name = history.getFileName().toString();
    if (name.startsWith("cp-upgrade-")) {
      return ControlPlaneUpgradeWorkflowImpl.class;
    }
    if (name.startsWith("workers-upgrade-")) {
      return WorkersUpgradeWorkflowImpl.class;
    }
    return null;
  }

  @ParameterizedTest
  @MethodSource("histories")
  void replaysCommittedHistoryWithoutNonDeterminism(Path history) throws Exception {
    WorkflowReplayer.replayWorkflowExecution(
        WorkflowExecutionHistory.fromJson(Files.readString(history)), implementationFor(history));
  }
}
