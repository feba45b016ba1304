package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.inplace.workflows.testing.HistoryFixtures;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replays committed histories of released NodeUpgrade runs against the current implementation: a
 * change that would break running workflows fails here and must go behind {@code
 * Workflow.getVersion}. Histories are regenerated with {@code -Dhistories.update=true} (see
 * NodeUpgradeWorkflowTest#recordReplayHistories) only when a change is deliberately versioned.
 */
class NodeUpgradeReplayTest {
  static List<Path> histories() throws Exception {
    List<Path> found = HistoryFixtures.withPrefix("node-upgrade-");
    assertFalse(found.isEmpty(), "no committed NodeUpgrade histories in " + HistoryFixtures.DIR);
    return found;
  }

  @ParameterizedTest
  @MethodSource("histories")
  void replaysCommittedHistoryWithoutNonDeterminism(Path history) throws Exception {
    HistoryFixtures.replay(history, NodeUpgradeWorkflowImpl.class);
  }
}
