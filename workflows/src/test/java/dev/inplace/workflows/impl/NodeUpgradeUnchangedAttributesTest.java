package dev.inplace.workflows.impl;

import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.MachineRecordResult;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.BackupResult;
import dev.inplace.workflows.api.HostActivities.InstallResult;
import dev.inplace.workflows.api.HostActivities.ServiceResult;
import dev.inplace.workflows.api.HostActivities.StageResult;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.CordonResult;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.NodeVersion;
import dev.inplace.workflows.api.NodeActivities.NodeVersions;
import dev.inplace.workflows.api.NodeActivities.UncordonResult;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import io.temporal.api.common.v1.Payload;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowOptions;
import io.temporal.common.SearchAttributes;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

/**
 * Change {@code node-upgrade-unchanged-attributes-kept}: a run upserts a search attribute only when its
 * value changes. A child starts with its cluster, kind, target version, node and phase (as {@link
 * NodeChildStubs} starts it), so its only upsert is the phase it ends in; a run started without them
 * (by hand) still upserts them all.
 */
class NodeUpgradeUnchangedAttributesTest {
  static final String FIXTURE = "node-upgrade-upgraded-unchanged-attributes-kept.json";

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow =
      TestWorkflowExtension.newBuilder()
          .registerWorkflowImplementationTypes(NodeUpgradeWorkflowImpl.class)
          .registerSearchAttribute("InplaceCluster", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceKind", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceTargetVersion", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .registerSearchAttribute("InplaceNode", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD_LIST)
          .registerSearchAttribute("InplacePhase", IndexedValueType.INDEXED_VALUE_TYPE_KEYWORD)
          .setDoNotStart(true)
          .build();

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = mock(ClusterApiActivities.class, withSettings().withoutAnnotations());
  private final NodeUpgradeRequest request = Fixtures.request("worker-1", NodeRole.WORKER);
  private final String workflowId = WorkflowIds.nodeUpgrade("fleet", "worker-1-machine", TO);

  @BeforeEach
  void healthyEstate() {
    when(nodes.inspectNode(any())).thenReturn(Fixtures.readyAt("worker-1", FROM));
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    when(hosts.stageArtifacts(any())).thenReturn(new StageResult(List.of("k3s", "k3s-airgap-images"), List.of(), 72 << 20));
    when(nodes.cordonNode(any())).thenReturn(new CordonResult(true, false));
    when(nodes.drainNode(any())).thenReturn(new DrainResult(3, 0, 1, 0, 2));
    when(hosts.backupBinaries(any())).thenReturn(new BackupResult(List.of("/usr/local/bin/k3s"), List.of()));
    when(hosts.installArtifacts(any())).thenReturn(new InstallResult(List.of("k3s", "k3s-airgap-images"), List.of()));
    when(hosts.restartService(any())).thenReturn(new ServiceResult("k3s-agent", true));
    when(nodes.awaitNodeVersion(argThat(r -> r != null && TO.equals(r.expectedVersion()))))
        .thenReturn(Fixtures.readyAt("worker-1", TO));
    when(nodes.uncordonNode(any())).thenReturn(new UncordonResult(true, ""));
    when(capi.recordMachineUpgrade(any()))
        .thenReturn(new MachineRecordResult(FROM, List.of("Machine fleet/worker-1-machine spec.version " + FROM + " -> " + TO)));
    when(nodes.controlPlaneVersions(any()))
        .thenReturn(new NodeVersions(List.of(new NodeVersion("cp-1", TO), new NodeVersion("cp-2", TO))));
  }

  /** Starts the run as its parent does: with its cluster, kind, target version, node and phase. */
  private NodeUpgradeWorkflow startedAsAChild(TestWorkflowEnvironment env, Worker worker) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    SearchAttributes attributes = SearchAttributes.newBuilder()
        .set(RunSearchAttributes.CLUSTER, request.node().cluster().toString())
        .set(RunSearchAttributes.KIND, RunSearchAttributes.KIND_NODE)
        .set(RunSearchAttributes.TARGET_VERSION, TO)
        .set(RunSearchAttributes.NODE, List.of("worker-1"))
        .set(RunSearchAttributes.PHASE, RunPhase.UPGRADING.name())
        .build();
    return env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class, WorkflowOptions.newBuilder()
        .setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).setTypedSearchAttributes(attributes).build());
  }

  private NodeUpgradeWorkflow startedByHand(TestWorkflowEnvironment env, Worker worker) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    env.start();
    return env.getWorkflowClient().newWorkflowStub(NodeUpgradeWorkflow.class,
        WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  /** Each upsert of the run's history: attribute name to its value as JSON, in order. */
  private List<Map<String, String>> upserts(TestWorkflowEnvironment env) {
    return env.getWorkflowClient().fetchHistory(workflowId).getEvents().stream()
        .filter(HistoryEvent::hasUpsertWorkflowSearchAttributesEventAttributes)
        .map(e -> {
          Map<String, String> fields = new TreeMap<>();
          e.getUpsertWorkflowSearchAttributesEventAttributes().getSearchAttributes().getIndexedFieldsMap()
              .forEach((name, value) -> fields.put(name, json(value)));
          return (Map<String, String>) fields;
        })
        .toList();
  }

  private static String json(Payload payload) {
    return DefaultDataConverter.STANDARD_INSTANCE.fromPayload(payload, Object.class, Object.class).toString();
  }

  @Test
  void aRunStartedWithItsAttributesUpsertsOnlyThePhaseItEndsIn(TestWorkflowEnvironment env, Worker worker) {
    startedAsAChild(env, worker).upgrade(request);

    assertEquals(List.of(Map.of("InplacePhase", "UPGRADED")), upserts(env));
  }

  @Test
  void aRunStartedByHandStillUpsertsEveryAttributeAndEachPhase(TestWorkflowEnvironment env, Worker worker) {
    startedByHand(env, worker).upgrade(request);

    List<Map<String, String>> upserts = upserts(env);
    assertEquals(3, upserts.size(), upserts.toString());
    assertEquals(List.of("InplaceCluster", "InplaceKind", "InplaceNode", "InplaceTargetVersion"),
        List.copyOf(upserts.get(0).keySet()));
    assertEquals(Map.of("InplacePhase", "UPGRADING"), upserts.get(1));
    assertEquals(Map.of("InplacePhase", "UPGRADED"), upserts.get(2));
  }

  /** Records the change's replay fixture (a child's run); {@code -Dhistories.update=true}, once. */
  @Test
  @org.junit.jupiter.api.condition.EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordUnchangedAttributesKeptHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded(FIXTURE);
    startedAsAChild(env, worker).upgrade(request);
    HistoryFixtures.record(env, workflowId, null, FIXTURE);
  }
}
