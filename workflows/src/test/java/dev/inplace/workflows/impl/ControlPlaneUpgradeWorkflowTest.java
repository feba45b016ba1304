package dev.inplace.workflows.impl;

import static dev.inplace.workflows.api.RunSearchAttributes.CLUSTER;
import static dev.inplace.workflows.api.RunSearchAttributes.KIND;
import static dev.inplace.workflows.api.RunSearchAttributes.KIND_CONTROL_PLANE;
import static dev.inplace.workflows.api.RunSearchAttributes.KIND_NODE;
import static dev.inplace.workflows.api.RunSearchAttributes.NODE;
import static dev.inplace.workflows.api.RunSearchAttributes.PHASE;
import static dev.inplace.workflows.api.RunSearchAttributes.TARGET_VERSION;
import static dev.inplace.workflows.testing.Fixtures.FROM;
import static dev.inplace.workflows.testing.Fixtures.TO;
import static dev.inplace.workflows.testing.ParentFixtures.awaitProgress;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlane;
import static dev.inplace.workflows.testing.ParentFixtures.controlPlanes;
import static dev.inplace.workflows.testing.ParentFixtures.inventory;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.mockito.ArgumentMatchers.any;
import static org.mockito.ArgumentMatchers.argThat;
import static org.mockito.Mockito.doAnswer;
import static org.mockito.Mockito.doReturn;
import static org.mockito.Mockito.doThrow;
import static org.mockito.Mockito.inOrder;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.never;
import static org.mockito.Mockito.times;
import static org.mockito.Mockito.verify;
import static org.mockito.Mockito.when;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterApiActivities.BookkeepingResult;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkRequest;
import dev.inplace.workflows.api.ClusterApiActivities.MachineMarkResult;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeResult;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.HostActivities.ArtifactCheckResult;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotRequest;
import dev.inplace.workflows.api.HostActivities.EtcdSnapshotResult;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.HostInspectRequest;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeActivities.BlockingBudget;
import dev.inplace.workflows.api.NodeActivities.BudgetReport;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneCheckRequest;
import dev.inplace.workflows.api.NodeActivities.ControlPlaneHealth;
import dev.inplace.workflows.api.NodeActivities.ExpectedNode;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodesRequest;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.NodeUpgradeWorkflow;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.testing.ChildScript;
import dev.inplace.workflows.testing.FakeNodeUpgrade;
import dev.inplace.workflows.testing.Fixtures;
import dev.inplace.workflows.testing.HistoryFixtures;
import dev.inplace.workflows.testing.ParentFixtures;
import io.temporal.api.enums.v1.EventType;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowOptions;
import io.temporal.client.WorkflowStub;
import io.temporal.client.WorkflowUpdateException;
import io.temporal.common.SearchAttributes;
import io.temporal.failure.ApplicationFailure;
import io.temporal.failure.CanceledFailure;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import io.temporal.worker.Worker;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.condition.EnabledIfSystemProperty;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.function.Executable;
import org.mockito.InOrder;

class ControlPlaneUpgradeWorkflowTest {

  @RegisterExtension
  static final TestWorkflowExtension testWorkflow =
      ParentFixtures.extension().registerWorkflowImplementationTypes(ControlPlaneUpgradeWorkflowImpl.class).build();

  private static final String SNAPSHOT = "inplace-pre-v1-31-2-k3s1";

  private final HostActivities hosts = mock(HostActivities.class, withSettings().withoutAnnotations());
  private final NodeActivities nodes = mock(NodeActivities.class, withSettings().withoutAnnotations());
  private final ClusterApiActivities capi = ParentFixtures.clusterApiMock();
  private final ChildScript.Listener children = mock(ChildScript.Listener.class);
  private final ChildScript script = new ChildScript().listener(children);
  private final String workflowId = WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO);
  private final ControlPlaneUpgradeRequest request =
      new ControlPlaneUpgradeRequest(Fixtures.CLUSTER, ParentFixtures.template(), 0, null);

  @BeforeEach
  void healthyControlPlaneOfThree() {
    when(capi.describeCluster(any())).thenReturn(inventory(controlPlanes(3, FROM)));
    nodesAre(Map.of());
    when(hosts.inspectHost(any())).thenReturn(Fixtures.hostWithOldRelease());
    when(hosts.verifyArtifacts(any())).thenReturn(new ArtifactCheckResult(List.of("k3s", "k3s-airgap-images")));
    when(nodes.listBlockingBudgets(any())).thenReturn(new BudgetReport(List.of()));
    when(hosts.snapshotEtcd(any()))
        .thenAnswer(inv -> {
          EtcdSnapshotRequest r = inv.getArgument(0);
          return new EtcdSnapshotResult(r.name(), "/var/lib/rancher/k3s/server/db/snapshots/" + r.name() + "-cp-1", false);
        });
    when(nodes.awaitControlPlaneHealthy(any())).thenReturn(new ControlPlaneHealth(true, List.of("cp-1", "cp-2", "cp-3")));
    when(capi.markMachineUpgrading(any())).thenReturn(new MachineMarkResult(true));
    when(capi.pauseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("pause KThreesControlPlane edge-1-control-plane")));
    when(capi.releaseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("unpause KThreesControlPlane edge-1-control-plane")));
    when(capi.recordControlPlaneVersion(any()))
        .thenReturn(new BookkeepingResult(List.of("KThreesControlPlane edge-1-control-plane spec.version " + FROM + " -> " + TO)));
  }

  /** Every listed node answers Ready at FROM unless {@code states} says otherwise. */
  private void nodesAre(Map<String, NodeState> states) {
    doAnswer(inv -> {
          NodesRequest r = inv.getArgument(0);
          return new NodesState(
              r.nodeNames().stream().map(n -> states.getOrDefault(n, Fixtures.readyAt(n, FROM))).toList(), List.of());
        })
        .when(nodes).inspectNodes(any());
  }

  private ControlPlaneUpgradeWorkflow start(TestWorkflowEnvironment env, Worker worker) {
    worker.registerActivitiesImplementations(hosts, nodes, capi);
    worker.registerWorkflowImplementationFactory(NodeUpgradeWorkflow.class, () -> new FakeNodeUpgrade(script));
    env.start();
    return env.getWorkflowClient()
        .newWorkflowStub(
            ControlPlaneUpgradeWorkflow.class,
            WorkflowOptions.newBuilder().setWorkflowId(workflowId).setTaskQueue(worker.getTaskQueue()).build());
  }

  private static ControlPlaneUpgradeResult resultOf(ControlPlaneUpgradeWorkflow run) {
    try {
      return WorkflowStub.fromTyped(run).getResult(60, TimeUnit.SECONDS, ControlPlaneUpgradeResult.class);
    } catch (TimeoutException e) {
      return fail("the run did not end within 60 s: " + run.progress());
    }
  }

  @Test
  void upgradesEachControlPlaneAloneBehindTheSnapshotAndTheHealthGate(TestWorkflowEnvironment env, Worker worker) {
    ControlPlaneUpgradeWorkflow run = start(env, worker);

    ControlPlaneUpgradeResult result = run.upgrade(request);

    InOrder order = inOrder(hosts, nodes, capi, children);
    order.verify(hosts).snapshotEtcd(argThat(r -> SNAPSHOT.equals(r.name()) && "cp-1".equals(r.host().nodeName())));
    // Paused for the whole run: no Machine records the new version while the object names the old.
    order.verify(capi).pauseControlPlane(argThat(r -> r.owner() != null && r.controlPlane() != null));
    // cp-1 starts with its turn: gate, mark, upgrade. cp-2 and cp-3 are prepared ahead (marked, their
    // child preflights and stages) while the node before them upgrades; each takes its turn, behind
    // the gate, only once that node has finished.
    order.verify(nodes).awaitControlPlaneHealthy(argThat(r -> expects(r, List.of())));
    order.verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-cp-1", true, workflowId));
    order.verify(children).started("cp-1");
    List<String> done = new java.util.ArrayList<>();
    for (String node : List.of("cp-1", "cp-2", "cp-3")) {
      List<String> upgradedBefore = List.copyOf(done);
      InOrder each = inOrder(nodes, capi, children);
      if (!node.equals("cp-1")) {
        each.verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-" + node, true, workflowId));
        each.verify(children).finished(done.get(done.size() - 1), true);
        each.verify(nodes).awaitControlPlaneHealthy(argThat(r -> expects(r, upgradedBefore)));
        each.verify(children).started(node);
      }
      each.verify(children).finished(node, true);
      each.verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-" + node, false, workflowId));
      done.add(node);
    }
    order.verify(capi).recordControlPlaneVersion(
        argThat(r -> TO.equals(r.version()) && workflowId.equals(r.owner())
            && ParentFixtures.CONTROL_PLANE.equals(r.controlPlane()) && "fleet".equals(r.namespace())));
    assertEquals(1, script.maxConcurrent(), "control-plane nodes must never overlap");
    assertEquals(List.of("cp-1", "cp-2", "cp-3"), script.starts());
    assertEquals(3, result.upgraded());
    assertEquals(SNAPSHOT, result.etcdSnapshot());
    assertFalse(result.aborted());
    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.SUCCEEDED, progress.phase());
    assertEquals(SNAPSHOT, progress.etcdSnapshot());
    assertTrue(progress.nodes().stream().allMatch(n -> n.phase() == NodePhase.UPGRADED
        && WorkflowIds.nodeUpgrade("fleet", n.machine(), TO).equals(n.workflowId())));
  }

  @Test
  void runsAndTheirChildrenAreFindableBySearchAttributes(TestWorkflowEnvironment env, Worker worker) {
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    run.upgrade(request);

    SearchAttributes parent = WorkflowStub.fromTyped(run).describe().getTypedSearchAttributes();
    assertEquals("fleet/edge-1", parent.get(CLUSTER));
    assertEquals(KIND_CONTROL_PLANE, parent.get(KIND));
    assertEquals(TO, parent.get(TARGET_VERSION));
    assertEquals("SUCCEEDED", parent.get(PHASE));
    assertFalse(parent.containsKey(NODE), "no node in flight at the end");

    WorkflowExecutionDescription child =
        env.getWorkflowClient().newUntypedWorkflowStub(WorkflowIds.nodeUpgrade("fleet", "edge-1-cp-2", TO)).describe();
    SearchAttributes attributes = child.getTypedSearchAttributes();
    assertEquals(KIND_NODE, attributes.get(KIND));
    assertEquals(List.of("cp-2"), attributes.get(NODE));
    assertEquals("fleet/edge-1", attributes.get(CLUSTER));
    assertEquals(TO, attributes.get(TARGET_VERSION));
    assertEquals("UPGRADING", attributes.get(PHASE));
    assertEquals("Upgrade cp-2 (edge-1-cp-2) " + FROM + " -> " + TO + ", control plane", child.getStaticSummary());
    assertEquals(workflowId, child.getParentExecution().getWorkflowId());
  }

  /** The gate expects the nodes already done at the target, the others at what preflight saw; k3s needs etcd voters. */
  private static boolean expects(ControlPlaneCheckRequest r, List<String> upgraded) {
    if (r == null || !r.requireEtcdVoters() || r.timeoutSeconds() != 300 || r.nodes().size() != 3) {
      return false;
    }
    for (ExpectedNode n : r.nodes()) {
      String version = upgraded.contains(n.nodeName()) ? TO : FROM;
      if (!version.equals(n.version())) {
        return false;
      }
    }
    return true;
  }

  @Test
  void refusesADowngrade(TestWorkflowEnvironment env, Worker worker) {
    when(capi.describeCluster(any()))
        .thenReturn(inventory(List.of(controlPlane(1, FROM), controlPlane(2, "v1.31.5+k3s1"), controlPlane(3, FROM))));
    assertRefused(env, worker, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "cp-2 runs v1.31.5+k3s1 (a downgrade)");
  }

  @Test
  void refusesToSkipAMinorVersion(TestWorkflowEnvironment env, Worker worker) {
    when(capi.describeCluster(any()))
        .thenReturn(inventory(List.of(controlPlane(1, "v1.29.9+k3s1"), controlPlane(2, FROM), controlPlane(3, FROM))));
    assertRefused(env, worker, UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "2 minors behind");
  }

  @Test
  void refusesWhenAControlPlaneNodeIsNotReady(TestWorkflowEnvironment env, Worker worker) {
    nodesAre(Map.of("cp-3", new NodeState("cp-3", false, false, FROM, null)));
    assertRefused(env, worker, UpgradeFailures.NODE_NOT_READY, "not Ready: cp-3");
  }

  @Test
  void refusesWhenAControlPlaneNodeIsMissing(TestWorkflowEnvironment env, Worker worker) {
    doReturn(new NodesState(List.of(Fixtures.readyAt("cp-1", FROM), Fixtures.readyAt("cp-2", FROM)), List.of("cp-3")))
        .when(nodes).inspectNodes(any());
    assertRefused(env, worker, UpgradeFailures.NODE_NOT_FOUND, "cp-3");
  }

  @Test
  void refusesWhenAHostKeyDoesNotMatch(TestWorkflowEnvironment env, Worker worker) {
    when(hosts.inspectHost(argThat(r -> r != null && "cp-2".equals(r.host().nodeName()))))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.HOST_KEY_MISMATCH, "host key of 10.0.0.2 does not match the pinned key"));
    assertRefused(env, worker, UpgradeFailures.HOST_KEY_MISMATCH, "does not match the pinned key");
  }

  @Test
  void refusesAHostOfAnotherArchitecture(TestWorkflowEnvironment env, Worker worker) {
    HostFacts old = Fixtures.hostWithOldRelease();
    when(hosts.inspectHost(any()))
        .thenReturn(new HostFacts("arm64", old.stagingFreeBytes(), old.installed(), old.installedVersion(), true));
    assertRefused(env, worker, UpgradeFailures.ARCHITECTURE_MISMATCH, "arm64");
  }

  @Test
  void refusesAnArtifactWhoseDigestDiffers(TestWorkflowEnvironment env, Worker worker) {
    when(hosts.verifyArtifacts(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ARTIFACT_DIGEST_MISMATCH, "k3s: sha256 differs from the catalogue"));
    assertRefused(env, worker, UpgradeFailures.ARTIFACT_DIGEST_MISMATCH, "sha256 differs");
  }

  @Test
  void aFailedSnapshotRefusesTheRunBeforeAnyNode(TestWorkflowEnvironment env, Worker worker) {
    doThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ETCD_SNAPSHOT_FAILED, "k3s etcd-snapshot save exited 1"))
        .when(hosts).snapshotEtcd(any());
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> start(env, worker).upgrade(request));
    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(UpgradeFailures.ETCD_SNAPSHOT_FAILED, failure.getType());
    assertTrue(failure.getOriginalMessage().contains(SNAPSHOT), failure.getOriginalMessage());
    assertNothingChanged();
  }

  @Test
  void preflightInspectsEveryControlPlaneHostAtOnce(TestWorkflowEnvironment env, Worker worker) {
    // Each inspection answers only once all three are under way: one after the other would never get there.
    java.util.concurrent.CountDownLatch underWay = new java.util.concurrent.CountDownLatch(3);
    when(hosts.inspectHost(any())).thenAnswer(
        onceAllUnderWay(underWay, UpgradeFailures.PREFLIGHT_FAILED, "inspected one at a time", Fixtures.hostWithOldRelease()));

    ControlPlaneUpgradeResult result = start(env, worker).upgrade(request);

    assertEquals(3, result.upgraded());
    assertEquals(0, underWay.getCount());
    verify(hosts, times(3)).inspectHost(any());
  }

  @Test
  void preflightVerifiesTheArtifactsWhileTheHostsAreInspected(TestWorkflowEnvironment env, Worker worker) {
    // The artifact check and the three inspections answer only once all four are under way.
    java.util.concurrent.CountDownLatch underWay = new java.util.concurrent.CountDownLatch(4);
    when(hosts.inspectHost(any())).thenAnswer(onceAllUnderWay(
        underWay, UpgradeFailures.PREFLIGHT_FAILED, "artifacts verified after the hosts", Fixtures.hostWithOldRelease()));
    when(hosts.verifyArtifacts(any())).thenAnswer(onceAllUnderWay(underWay, UpgradeFailures.ARTIFACT_UNAVAILABLE,
        "artifacts verified before the hosts", new ArtifactCheckResult(List.of("k3s", "k3s-airgap-images"))));

    assertEquals(3, start(env, worker).upgrade(request).upgraded());
    assertEquals(0, underWay.getCount());
    verify(hosts, times(1)).verifyArtifacts(any());
  }

  @Test
  void aHostRefusalIsReportedBeforeAnArtifactThatFailsAlongsideIt(TestWorkflowEnvironment env, Worker worker) {
    HostFacts old = Fixtures.hostWithOldRelease();
    when(hosts.inspectHost(any()))
        .thenReturn(new HostFacts("arm64", old.stagingFreeBytes(), old.installed(), old.installedVersion(), true));
    when(hosts.verifyArtifacts(any()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.ARTIFACT_DIGEST_MISMATCH, "k3s: sha256 differs from the catalogue"));
    assertRefused(env, worker, UpgradeFailures.ARCHITECTURE_MISMATCH, "arm64");
  }

  @Test
  void inspectedTogetherTheRefusalIsStillTheFirstControlPlaneInMachineOrder(TestWorkflowEnvironment env, Worker worker) {
    // cp-3's host refuses at once; cp-2's answers later with another refusal: cp-2's is the one reported.
    java.util.concurrent.CountDownLatch cp3Answered = new java.util.concurrent.CountDownLatch(1);
    HostFacts old = Fixtures.hostWithOldRelease();
    when(hosts.inspectHost(any())).thenAnswer(inv -> {
      HostInspectRequest r = inv.getArgument(0);
      switch (r.host().nodeName()) {
        case "cp-3" -> {
          cp3Answered.countDown();
          throw UpgradeFailures.nonRetryable(UpgradeFailures.HOST_KEY_MISMATCH, "host key of cp-3 does not match the pinned key");
        }
        case "cp-2" -> {
          cp3Answered.await(10, TimeUnit.SECONDS);
          return new HostFacts("arm64", old.stagingFreeBytes(), old.installed(), old.installedVersion(), true);
        }
        default -> {
          return old;
        }
      }
    });

    assertRefused(env, worker, UpgradeFailures.ARCHITECTURE_MISMATCH, "arm64");
    assertEquals(0, cp3Answered.getCount());
  }

  /**
   * Answers {@code answer} only once {@code underWay} has counted down to zero, each call counting
   * one: calls made one after the other never get there, and fail with {@code type} after 10 s.
   */
  private static <T> org.mockito.stubbing.Answer<T> onceAllUnderWay(
      java.util.concurrent.CountDownLatch underWay, String type, String why, T answer) {
    return inv -> {
      underWay.countDown();
      if (!underWay.await(10, TimeUnit.SECONDS)) {
        throw UpgradeFailures.nonRetryable(type, why);
      }
      return answer;
    };
  }

  private void assertRefused(TestWorkflowEnvironment env, Worker worker, String type, String text) {
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowFailedException e = assertThrows(WorkflowFailedException.class, () -> run.upgrade(request));

    ApplicationFailure failure = assertInstanceOf(ApplicationFailure.class, e.getCause());
    assertEquals(type, failure.getType(), failure.getOriginalMessage());
    assertTrue(failure.getOriginalMessage().contains(text), failure.getOriginalMessage());
    assertTrue(failure.getOriginalMessage().contains("nothing was changed"), failure.getOriginalMessage());
    verify(hosts, never()).snapshotEtcd(any());
    assertNothingChanged();
    assertEquals(RunPhase.FAILED, run.progress().phase());
  }

  private void assertNothingChanged() {
    verify(capi, never()).markMachineUpgrading(any());
    verify(capi, never()).recordControlPlaneVersion(any());
    assertEquals(List.of(), script.starts());
  }

  @Test
  void aFailedNodeHaltsTheRunUntilRetryNodeCompletesIt(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce("cp-2", UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, NodePhase.ROLLED_BACK, Duration.ofMinutes(5));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);

    UpgradeProgress halted = awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);
    env.sleep(Duration.ofHours(2));

    NodeStatus failed = node(run.progress(), "cp-2");
    assertEquals(NodePhase.ROLLED_BACK, failed.phase());
    assertEquals(UpgradeStep.VERIFY, failed.step());
    assertEquals(UpgradeFailures.VERIFY_TIMEOUT, failed.reason());
    assertTrue(failed.message().contains("verify failed"), failed.message());
    assertEquals(WorkflowIds.nodeUpgrade("fleet", "edge-1-cp-2", TO), failed.workflowId());
    assertTrue(failed.finishedMillis() >= failed.startedMillis() && failed.startedMillis() > 0);
    assertTrue(halted.message().contains("halted: cp-2 failed at verify (VerifyTimeout)"), halted.message());
    assertEquals(RunPhase.HALTED, run.progress().phase());
    assertEquals(NodePhase.PENDING, node(run.progress(), "cp-3").phase());
    assertEquals(List.of("cp-1", "cp-2"), script.starts(), "nothing starts while halted");
    verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-cp-2", false, workflowId));
    verify(capi, never()).recordControlPlaneVersion(any());

    String answer = run.retryNode("cp-2");

    assertTrue(answer.contains("cp-2 queued for retry"), answer);
    ControlPlaneUpgradeResult result = resultOf(run);
    assertEquals(3, result.upgraded());
    assertEquals(0, result.failed());
    assertEquals(List.of("cp-1", "cp-2", "cp-2", "cp-3"), script.starts());
    verify(capi, times(1)).recordControlPlaneVersion(any());
  }

  @Test
  void skipNodeFinishesTheRunWithoutRecordingTheControlPlaneVersion(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce("cp-2", UpgradeStep.RESTART, UpgradeFailures.SERVICE_RESTART_FAILED, NodePhase.ROLLED_BACK, Duration.ofMinutes(3));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);

    run.skipNode("cp-2");

    ControlPlaneUpgradeResult result = resultOf(run);
    assertEquals(2, result.upgraded());
    assertEquals(1, result.skipped());
    assertEquals(0, result.failed());
    verify(capi, never()).recordControlPlaneVersion(any());
    UpgradeProgress progress = run.progress();
    assertEquals(NodePhase.SKIPPED, node(progress, "cp-2").phase());
    assertTrue(progress.message().contains("not recorded on KThreesControlPlane edge-1-control-plane"), progress.message());
    assertEquals(List.of("cp-1", "cp-2", "cp-3"), script.starts());
  }

  @Test
  void aFailingHealthGateHaltsBeforeTheNodeAndRetryRunsTheGateAgain(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.awaitControlPlaneHealthy(any()))
        .thenReturn(new ControlPlaneHealth(true, List.of()))
        .thenThrow(UpgradeFailures.nonRetryable(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, "cp-1 is not an etcd voter"))
        .thenReturn(new ControlPlaneHealth(true, List.of()));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);

    UpgradeProgress halted = awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);

    NodeStatus gated = node(halted, "cp-2");
    assertEquals(NodePhase.FAILED, gated.phase());
    assertEquals(UpgradeFailures.CONTROL_PLANE_UNHEALTHY, gated.reason());
    assertEquals(UpgradeStep.PREFLIGHT, gated.step());
    assertTrue(gated.message().contains("cp-1 is not an etcd voter"), gated.message());
    // cp-2 was prepared ahead (marked, staged) but never upgraded: its child stood down at the gate.
    assertFalse(script.starts().contains("cp-2"), script.starts().toString());

    run.retryNode("cp-2");

    assertEquals(3, resultOf(run).upgraded());
    verify(nodes, times(4)).awaitControlPlaneHealthy(any());
    assertEquals(List.of("cp-1", "cp-2", "cp-3"), script.starts());
  }

  @Test
  void abortLetsTheNodeInFlightFinishAndStartsNoMore(TestWorkflowEnvironment env, Worker worker) {
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);

    String answer = run.abort();

    assertTrue(answer.startsWith("aborting"), answer);
    ControlPlaneUpgradeResult result = resultOf(run);
    assertTrue(result.aborted());
    assertEquals(1, result.upgraded());
    assertEquals(List.of("cp-1"), script.starts());
    verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-cp-1", false, workflowId));
    verify(capi, never()).recordControlPlaneVersion(any());
    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.ABORTED, progress.phase());
    assertEquals(NodePhase.PENDING, node(progress, "cp-3").phase());
  }

  @Test
  void refusedControlsLeaveNoTraceInHistory(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce("cp-2", UpgradeStep.DRAIN, UpgradeFailures.DRAIN_BLOCKED, NodePhase.ROLLED_BACK, Duration.ofMinutes(2));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);

    refused(() -> run.setMaxUnavailable("2"), "one at a time");
    refused(run::resume, "not paused");
    run.pause();
    refused(run::pause, "already paused");
    refused(() -> run.retryNode("cp-3"), "cp-3 is PENDING");
    refused(() -> run.retryNode("cp-9"), "unknown node 'cp-9'");
    refused(() -> run.skipNode("cp-1"), "already upgraded");
    refused(() -> run.skipNode("nope"), "unknown node");
    assertTrue(run.progress().paused());
    run.abort();

    ControlPlaneUpgradeResult result = resultOf(run);
    assertTrue(result.aborted());
    long accepted = env.getWorkflowClient().fetchHistory(workflowId).getEvents().stream()
        .filter(e -> e.getEventType() == EventType.EVENT_TYPE_WORKFLOW_EXECUTION_UPDATE_ACCEPTED)
        .count();
    assertEquals(2, accepted, "only pause and abort were accepted");
  }

  @Test
  void aControlPlaneAlreadyAtTheTargetTakesNoSnapshotAndStartsNothing(TestWorkflowEnvironment env, Worker worker) {
    when(capi.describeCluster(any())).thenReturn(inventory(controlPlanes(3, TO)));
    doAnswer(inv -> new NodesState(
            ((NodesRequest) inv.getArgument(0)).nodeNames().stream().map(n -> Fixtures.readyAt(n, TO)).toList(), List.of()))
        .when(nodes).inspectNodes(any());

    ControlPlaneUpgradeResult result = start(env, worker).upgrade(request);

    assertEquals(3, result.upgraded());
    assertNull(result.etcdSnapshot());
    verify(hosts, never()).snapshotEtcd(any());
    verify(hosts, never()).inspectHost(any());
    verify(capi, never()).markMachineUpgrading(any());
    assertEquals(List.of(), script.starts());
    verify(capi).recordControlPlaneVersion(any());
  }

  @Test
  void blockingBudgetsAreReportedAsAWarning(TestWorkflowEnvironment env, Worker worker) {
    when(nodes.listBlockingBudgets(any()))
        .thenReturn(new BudgetReport(List.of(new BlockingBudget("apps", "web-pdb", 0, 3))));

    ControlPlaneUpgradeWorkflow run = start(env, worker);
    assertEquals(3, run.upgrade(request).upgraded());

    String message = run.progress().message();
    assertTrue(message.contains("apps/web-pdb (0 disruptions allowed, 3 pods)"), message);
  }

  @Test
  void cancellingTheRunUnmarksTheMachineInFlight(TestWorkflowEnvironment env, Worker worker) {
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);

    WorkflowStub stub = WorkflowStub.fromTyped(run);
    stub.cancel();

    WorkflowFailedException e =
        assertThrows(WorkflowFailedException.class, () -> stub.getResult(60, TimeUnit.SECONDS, ControlPlaneUpgradeResult.class));
    assertInstanceOf(CanceledFailure.class, e.getCause());
    verify(children).finished("cp-1", false);
    verify(capi).markMachineUpgrading(new MachineMarkRequest("fleet", "edge-1-cp-1", false, workflowId));
    assertEquals(List.of("cp-1"), script.starts());
    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.ABORTED, progress.phase());
    assertEquals(UpgradeFailures.CANCELLED, node(progress, "cp-1").reason());
  }

  /**
   * Regenerates the committed replay histories (run with {@code -Dhistories.update=true}): a run that
   * halts on a failed node and completes after a retryNode Update. {@link ParentUpgradeReplayTest}
   * replays it on every build.
   */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordReplayHistories(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded("cp-upgrade-halted-retried-mark-owner.json");
    script.failsOnce("cp-2", UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, NodePhase.ROLLED_BACK, Duration.ofMinutes(5));
    when(nodes.listBlockingBudgets(any()))
        .thenReturn(new BudgetReport(List.of(new BlockingBudget("apps", "web-pdb", 0, 3))));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);
    run.retryNode("cp-2");
    assertEquals(3, resultOf(run).upgraded());
    HistoryFixtures.record(env, workflowId, null, "cp-upgrade-halted-retried-mark-owner.json");
  }

  /**
   * Records the history of change control-plane-hosts-inspected-together (the hosts inspected at
   * once in preflight) for {@link ParentUpgradeReplayTest}.
   */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordHostsInspectedTogetherHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    recordAHealthyRun(env, worker, "cp-upgrade-hosts-inspected-together.json");
  }

  /**
   * Records the history of change control-plane-artifacts-verified-alongside-hosts (the artifacts
   * verified while the hosts are inspected) for {@link ParentUpgradeReplayTest}.
   */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordArtifactsVerifiedAlongsideHostsHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    recordAHealthyRun(env, worker, "cp-upgrade-artifacts-verified-alongside-hosts.json");
  }

  /** Records a run of the healthy cluster that upgrades all three control planes, unless {@code file} is committed. */
  private void recordAHealthyRun(TestWorkflowEnvironment env, Worker worker, String file) throws Exception {
    HistoryFixtures.assumeNotRecorded(file);
    assertEquals(3, start(env, worker).upgrade(request).upgraded());
    HistoryFixtures.record(env, workflowId, null, file);
  }

  /**
   * Records the history of a run aborted before any node changed, which unpauses the control-plane
   * object ({@code control-plane-paused-for-run} version 2), for {@link ParentUpgradeReplayTest}.
   */
  @Test
  @EnabledIfSystemProperty(named = "histories.update", matches = "true")
  void recordUnpauseHistory(TestWorkflowEnvironment env, Worker worker) throws Exception {
    HistoryFixtures.assumeNotRecorded("cp-upgrade-aborted-unpaused.json");
    abortedBeforeAnyNodeChangedUnpausesTheControlPlane(env, worker);
    HistoryFixtures.record(env, workflowId, null, "cp-upgrade-aborted-unpaused.json");
  }

  // ---- the control-plane object's pause at the end ---------------------------------------------

  @Test
  void abortedBeforeAnyNodeChangedUnpausesTheControlPlane(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce("cp-1", UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, NodePhase.ROLLED_BACK, Duration.ofMinutes(5));
    when(capi.releaseControlPlane(any())).thenReturn(new BookkeepingResult(List.of("unpause KThreesControlPlane edge-1-control-plane")));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);

    run.abort();

    ControlPlaneUpgradeResult result = resultOf(run);
    assertTrue(result.aborted());
    assertEquals(0, result.upgraded());
    assertFalse(result.controlPlaneLeftPaused());
    verify(capi).releaseControlPlane(argThat(r -> workflowId.equals(r.owner())
        && ParentFixtures.CONTROL_PLANE.equals(r.controlPlane()) && "fleet".equals(r.namespace())));
    verify(capi, never()).recordControlPlaneVersion(any());
    assertTrue(result.message().contains("no node changed, KThreesControlPlane edge-1-control-plane unpaused"),
        result.message());
    assertEquals(result.message(), run.progress().message());
  }

  @Test
  void everyNodeSkippedBeforeAnyChangedUnpausesTheControlPlane(TestWorkflowEnvironment env, Worker worker) {
    for (String node : List.of("cp-1", "cp-2", "cp-3")) {
      script.failsOnce(node, UpgradeStep.DRAIN, UpgradeFailures.DRAIN_BLOCKED, NodePhase.ROLLED_BACK, Duration.ofMinutes(1));
    }
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    for (String node : List.of("cp-1", "cp-2", "cp-3")) {
      awaitProgress(env, run, Duration.ofMinutes(1),
          p -> p.phase() == RunPhase.HALTED && node(p, node).phase() == NodePhase.ROLLED_BACK);
      run.skipNode(node);
    }

    ControlPlaneUpgradeResult result = resultOf(run);
    assertEquals(3, result.skipped());
    assertFalse(result.controlPlaneLeftPaused());
    verify(capi).releaseControlPlane(argThat(r -> workflowId.equals(r.owner())));
    assertTrue(result.message().contains("unpaused"), result.message());
  }

  @Test
  void cancelledBeforeAnyNodeChangedUnpausesTheControlPlane(TestWorkflowEnvironment env, Worker worker) {
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);

    WorkflowStub stub = WorkflowStub.fromTyped(run);
    stub.cancel();

    assertThrows(WorkflowFailedException.class, () -> stub.getResult(60, TimeUnit.SECONDS, ControlPlaneUpgradeResult.class));
    verify(capi).releaseControlPlane(argThat(r -> workflowId.equals(r.owner())));
    UpgradeProgress progress = run.progress();
    assertEquals(RunPhase.ABORTED, progress.phase());
    assertTrue(progress.message().contains("no node changed, KThreesControlPlane edge-1-control-plane unpaused"),
        progress.message());
  }

  @Test
  void aPauseSomeoneElseHoldsIsNotClaimedAsReleased(TestWorkflowEnvironment env, Worker worker) {
    script.failsOnce("cp-1", UpgradeStep.VERIFY, UpgradeFailures.VERIFY_TIMEOUT, NodePhase.ROLLED_BACK, Duration.ofMinutes(5));
    when(capi.releaseControlPlane(any())).thenReturn(new BookkeepingResult(List.of()));
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofMinutes(1), p -> p.phase() == RunPhase.HALTED);

    run.abort();

    ControlPlaneUpgradeResult result = resultOf(run);
    assertTrue(result.message().contains("holds no pause of this run (someone else's stays)"), result.message());
  }

  @Test
  void abortedWithMixedVersionsKeepsTheControlPlanePausedAndSaysSo(TestWorkflowEnvironment env, Worker worker) {
    ControlPlaneUpgradeWorkflow run = start(env, worker);
    WorkflowClient.start(run::upgrade, request);
    awaitProgress(env, run, Duration.ofSeconds(10), p -> p.inFlight() == 1);

    run.abort();

    ControlPlaneUpgradeResult result = resultOf(run);
    assertEquals(1, result.upgraded());
    assertTrue(result.controlPlaneLeftPaused());
    verify(capi, never()).releaseControlPlane(any());
    assertTrue(result.message().contains("stays paused (cluster.x-k8s.io/paused) because its nodes run mixed versions"),
        result.message());
  }

  private static void refused(Executable update, String text) {
    WorkflowUpdateException e = assertThrows(WorkflowUpdateException.class, update);
    String message = rootMessage(e);
    assertTrue(message.contains(text), message);
  }

  static String rootMessage(Throwable e) {
    Throwable t = e;
    while (t.getCause() != null) {
      t = t.getCause();
    }
    return t instanceof ApplicationFailure app ? app.getOriginalMessage() : String.valueOf(t.getMessage());
  }

  static NodeStatus node(UpgradeProgress progress, String node) {
    return progress.nodes().stream().filter(n -> n.node().equals(node)).findFirst().orElseThrow();
  }
}
