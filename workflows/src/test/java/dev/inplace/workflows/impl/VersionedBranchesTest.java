package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.tngtech.archunit.core.domain.JavaClass;
import com.tngtech.archunit.core.importer.ClassFileImporter;
import com.tngtech.archunit.core.importer.ImportOption;
import dev.inplace.workflows.testing.HistoryFixtures;
import io.temporal.workflow.Workflow;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * Every versioned branch of every workflow type is replayed: for each change ID, the replayed
 * fixtures of each workflow type that calls it include a history without its marker (the code
 * before the change) and one with each version up to the newest.
 */
class VersionedBranchesTest {
  /** A change ID, its newest version, and the fixture prefixes of the workflow types that call it. */
  record Change(String id, int newest, List<String> prefixes) {}

  static final List<Change> CHANGES = List.of(
      new Change(NodeUpgradeWorkflowImpl.SEARCH_ATTRIBUTES_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.DISTRIBUTION_STEPS_CHANGE, 1, List.of("node-upgrade-")),
      new Change(ParentMachineMarks.LOCAL_MACHINE_MARKS_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.OWN_MACHINE_MARK_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.UI_SUMMARIES_CHANGE, 1, List.of("node-upgrade-")),
      new Change(ParentMachineMarks.MACHINE_MARK_OWNER_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-")),
      new Change(ControlPlaneUpgradeWorkflowImpl.PAUSE_CONTROL_PLANE_CHANGE, 2, List.of("cp-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.CATALOGUE_RULES_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.K0S_NODE_VERSION_CHANGE, 1, List.of("node-upgrade-")),
      new Change(ClusterPreflight.K0S_NODE_VERSION_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-", "plan-")),
      new Change(NodeChildren.CHILD_DESCRIPTIONS_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-")),
      new Change(ControlPlaneUpgradeWorkflowImpl.PARALLEL_HOST_INSPECTION_CHANGE, 1, List.of("cp-upgrade-")),
      new Change(ControlPlaneUpgradeWorkflowImpl.ARTIFACTS_ALONGSIDE_HOSTS_CHANGE, 1, List.of("cp-upgrade-")),
      new Change(NodeChildren.PREPARE_AHEAD_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.PERMIT_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeChildren.PREPARE_AFTER_STAGED_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.STAGED_REPORT_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.BACKUP_BEFORE_CORDON_CHANGE, 1, List.of("node-upgrade-")),
      new Change(ParentMachineMarks.BATCHED_MACHINE_MARKS_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-")),
      new Change(WorkersUpgradeWorkflowImpl.HAND_OVER_CHANGE, 1, List.of("workers-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.END_REPORT_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.PREFLIGHT_READS_AT_ONCE_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.HOST_ACCESS_CHANGE, 1, List.of("node-upgrade-")),
      new Change(NodeUpgradeWorkflowImpl.UNCHANGED_ATTRIBUTES_KEPT_CHANGE, 1, List.of("node-upgrade-")),
      new Change(ChildEnds.END_ON_REPORT_CHANGE, 1, List.of("workers-upgrade-")),
      new Change(ResetChildren.ADOPT_RESET_CHILD_CHANGE, 1, List.of("workers-upgrade-")),
      new Change(NodeChildren.PACED_PREPARATION_CHANGE, 1, List.of("cp-upgrade-", "workers-upgrade-")),
      new Change(PoolStartChecks.READS_AT_ONCE_CHANGE, 1, List.of("workers-upgrade-")),
      // Asked only when a node's earlier thread is still alive, which only a run without nodes
      // prepared ahead meets there (a WorkersUpgrade run from parent-prepares-ahead on always prepares ahead).
      new Change(NodeLoop.START_AFTER_OLD_THREAD_CHANGE, 1, List.of("cp-upgrade-")));

  /**
   * Every production class of the implementation packages: a change ID declared in any of them, a
   * collaborator added later included, must be covered here (a hand-kept list of classes would miss
   * it).
   */
  static List<Class<?>> implementations() {
    return new ClassFileImporter()
        .withImportOption(ImportOption.Predefined.DO_NOT_INCLUDE_TESTS)
        .importPackages("dev.inplace.workflows.impl")
        .stream()
        .<Class<?>>map(JavaClass::reflect)
        .toList();
  }

  @Test
  void everyDeclaredChangeIdIsCovered() throws Exception {
    Set<String> declared = new TreeSet<>();
    List<Class<?>> implementations = implementations();
    assertTrue(implementations.contains(NodeUpgradeWorkflowImpl.class), implementations.toString());
    for (Class<?> type : implementations) {
      for (Field field : type.getDeclaredFields()) {
        if (Modifier.isStatic(field.getModifiers()) && field.getType() == String.class
            && field.getName().endsWith("_CHANGE")) {
          field.setAccessible(true);
          declared.add((String) field.get(null));
        }
      }
    }
    Set<String> covered = new TreeSet<>(CHANGES.stream().map(Change::id).toList());
    assertEquals(declared, covered, "a new change ID needs an entry here and fixtures for each branch");
  }

  @Test
  void everyVersionOfEveryChangeHasAReplayedFixture() throws Exception {
    List<String> missing = new ArrayList<>();
    for (Change change : CHANGES) {
      for (String prefix : change.prefixes()) {
        for (int version = Workflow.DEFAULT_VERSION; version <= change.newest(); version++) {
          if (version == 0) {
            continue; // getVersion never records 0 here: every change goes from DEFAULT to 1
          }
          if (!hasFixture(prefix, change.id(), version)) {
            missing.add(prefix + "* with " + change.id() + "=" + (version == Workflow.DEFAULT_VERSION ? "none" : version));
          }
        }
      }
    }
    assertTrue(missing.isEmpty(), "no replayed fixture for: " + missing);
  }

  private static boolean hasFixture(String prefix, String changeId, int version) throws Exception {
    for (Path fixture : replayed(prefix)) {
      Map<String, Integer> markers = HistoryFixtures.versionMarkers(HistoryFixtures.read(fixture));
      if (markers.getOrDefault(changeId, Workflow.DEFAULT_VERSION) == version) {
        return true;
      }
    }
    return false;
  }

  private static List<Path> replayed(String prefix) throws Exception {
    if (prefix.startsWith("node-upgrade-")) {
      return NodeUpgradeReplayTest.histories();
    }
    if (prefix.startsWith("plan-")) {
      return PlanWorkflowTest.histories().toList();
    }
    return ParentUpgradeReplayTest.histories().stream()
        .filter(p -> p.getFileName().toString().startsWith(prefix))
        .toList();
  }
}
