package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.testing.HistoryFixtures;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Stream;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Replays committed histories of ControlPlaneUpgrade and WorkersUpgrade runs (with a halt, Updates
 * and a continue-as-new) against the current implementations: a change that would break running
 * workflows fails here and must go behind {@code Workflow.getVersion}. New fixtures are recorded
 * under new names with {@code -Dhistories.update=true} (the {@code recordReplayHistories} tests).
 */
class ParentUpgradeReplayTest {
  /**
   * Recorded by commits dc55ad3 and 71c4fa5, which changed the parents' commands without
   * Workflow.getVersion: no marker tells them apart from runs of the versions before, whose code
   * path the versioned workflows restore for unmarked histories. Runs started on those builds
   * cannot be replayed by any later worker; they are kept (fixtures are append-only) and proven
   * unreplayable here so that nobody mistakes them for supported histories.
   */
  static final Set<String> UNVERSIONED_CHANGES =
      Set.of("cp-upgrade-halted-retried.json", "workers-upgrade-first-run.json", "workers-upgrade-last-run.json");

  static List<Path> histories() throws Exception {
    List<Path> found = parents().stream()
        .filter(p -> !UNVERSIONED_CHANGES.contains(p.getFileName().toString()))
        .toList();
    assertTrue(found.size() >= 6, "committed parent histories: " + found);
    return found;
  }

  static List<Path> unversioned() throws Exception {
    List<Path> found = parents().stream()
        .filter(p -> UNVERSIONED_CHANGES.contains(p.getFileName().toString()))
        .toList();
    assertFalse(found.isEmpty());
    return found;
  }

  private static List<Path> parents() throws Exception {
    return HistoryFixtures.all().stream().filter(p -> implementationFor(p) != null).toList();
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
    HistoryFixtures.replay(history, implementationFor(history));
  }

  @ParameterizedTest
  @MethodSource("unversioned")
  void historiesOfUnversionedChangesStayUnreplayable(Path history) {
    RuntimeException e = assertThrows(RuntimeException.class,
        () -> HistoryFixtures.replay(history, implementationFor(history)));
    assertTrue(String.valueOf(rootOf(e).getMessage()).toLowerCase().contains("nondetermin")
            || rootOf(e).getClass().getSimpleName().contains("NonDeterministic"),
        "expected a non-determinism error, got " + rootOf(e));
  }

  /**
   * The fixtures recorded for a versioned branch of the parents (file, change ID): each replays and
   * carries its change's marker, so the branch it was recorded for is the one replayed.
   */
  static Stream<Arguments> versionedBranches() {
    return Stream.of(
        Arguments.of("cp-upgrade-k0s-next-build.json", ClusterPreflight.K0S_NODE_VERSION_CHANGE),
        Arguments.of("workers-upgrade-k0s-next-build.json", ClusterPreflight.K0S_NODE_VERSION_CHANGE),
        Arguments.of("cp-upgrade-child-descriptions.json", NodeChildren.CHILD_DESCRIPTIONS_CHANGE),
        Arguments.of("workers-upgrade-child-descriptions.json", NodeChildren.CHILD_DESCRIPTIONS_CHANGE),
        Arguments.of("cp-upgrade-hosts-inspected-together.json", ControlPlaneUpgradeWorkflowImpl.PARALLEL_HOST_INSPECTION_CHANGE),
        Arguments.of("cp-upgrade-artifacts-verified-alongside-hosts.json", ControlPlaneUpgradeWorkflowImpl.ARTIFACTS_ALONGSIDE_HOSTS_CHANGE),
        Arguments.of("cp-upgrade-prepared-ahead.json", NodeChildren.PREPARE_AHEAD_CHANGE),
        Arguments.of("cp-upgrade-prepared-ahead-gate-failed-retried.json", NodeChildren.PREPARE_AHEAD_CHANGE),
        Arguments.of("workers-upgrade-prepared-ahead-first-run.json", NodeChildren.PREPARE_AHEAD_CHANGE),
        Arguments.of("workers-upgrade-prepared-ahead-last-run.json", NodeChildren.PREPARE_AHEAD_CHANGE),
        Arguments.of("workers-upgrade-prepared-ahead-paused-skipped-failed.json", NodeChildren.PREPARE_AHEAD_CHANGE),
        Arguments.of("workers-upgrade-prepared-ahead-aborted.json", NodeChildren.PREPARE_AHEAD_CHANGE),
        Arguments.of("workers-upgrade-prepared-ahead-cancelled.json", NodeChildren.PREPARE_AHEAD_CHANGE),
        Arguments.of("cp-upgrade-prepared-after-staged.json", NodeChildren.PREPARE_AFTER_STAGED_CHANGE),
        Arguments.of("workers-upgrade-prepared-after-staged.json", NodeChildren.PREPARE_AFTER_STAGED_CHANGE),
        Arguments.of("cp-upgrade-batched-machine-marks.json", ParentMachineMarks.BATCHED_MACHINE_MARKS_CHANGE),
        Arguments.of("workers-upgrade-batched-machine-marks.json", ParentMachineMarks.BATCHED_MACHINE_MARKS_CHANGE),
        Arguments.of("workers-upgrade-handed-over-first-run.json", WorkersUpgradeWorkflowImpl.HAND_OVER_CHANGE),
        Arguments.of("workers-upgrade-handed-over-next-run.json", WorkersUpgradeWorkflowImpl.HAND_OVER_CHANGE),
        Arguments.of(EndOnReportTest.FIXTURE, ChildEnds.END_ON_REPORT_CHANGE),
        Arguments.of(ResetChildTest.FIXTURE, ResetChildren.ADOPT_RESET_CHILD_CHANGE),
        Arguments.of(KubeadmControlPlaneUpgradeTest.RETRIED_WHILE_UNMARKING, NodeLoop.START_AFTER_OLD_THREAD_CHANGE));
  }

  @ParameterizedTest
  @MethodSource("versionedBranches")
  void theFixtureOfAVersionedBranchReplaysWithItsMarker(String file, String changeId) throws Exception {
    Path history = HistoryFixtures.DIR.resolve(file);
    assertEquals(1, HistoryFixtures.versionMarkers(HistoryFixtures.read(history)).get(changeId), file);
    HistoryFixtures.replay(history, implementationFor(history));
  }

  private static Throwable rootOf(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null && t.getCause() != t) {
      t = t.getCause();
    }
    return t;
  }
}
