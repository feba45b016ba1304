package dev.inplace.worker.watch;

import static dev.inplace.worker.watch.WatcherHarness.condition;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.NodeRecord;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.WorkflowIds;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

@EnableKubernetesMockClient(crud = true, https = false)
@Timeout(120)
class ControlPlaneUpgradeWatchTest {
  KubernetesClient client;
  private WatcherHarness h;

  @BeforeEach
  void setUp() {
    h = new WatcherHarness(client);
  }

  @AfterEach
  void tearDown() {
    h.close();
  }

  private ControlPlaneUpgrade create(String name) {
    return h.create(TestEstate.controlPlaneUpgrade(name, TestEstate.spec(new ControlPlaneUpgradeSpec())));
  }

  private static String runId(ControlPlaneUpgrade cr) {
    return WorkflowIds.controlPlaneUpgradeForResource(TestEstate.NAMESPACE, cr.getMetadata().getName(), cr.getMetadata().getUid());
  }

  @Test
  void aNewResourceStartsOneRunNamedAfterItAndItsProgressIsMirroredToTheEnd() {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("to-1-31");
    String id = runId(cr);

    UpgradeStatus running = h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty()
        && "Upgrading".equals(s.getNodes().get(0).getPhase()));
    assertEquals(List.of(id), running.getWorkflowIds());
    assertEquals(UpgradePhase.RUNNING, running.getPhase());
    assertEquals(1L, running.getFrozenGeneration());
    assertEquals("0/2", running.getProgress());
    assertTrue(h.controlPlane("to-1-31").getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER));
    ControlPlaneUpgradeRequest request = h.request(id, ControlPlaneUpgradeRequest.class);
    assertEquals(TestEstate.TO, request.template().targetVersion());
    assertEquals("k3s", request.template().artifacts().get(0).name());
    assertEquals(TestEstate.SSH_KEY, request.template().ssh().privateKeySecret());
    // The whole template, field for field, as the watcher has always frozen it for a spec that sets
    // only the required fields (the intake's defaults).
    assertEquals(new NodeUpgradeTemplate(Distribution.K3S, TestEstate.TO, request.template().artifacts(),
        HostProfile.k3sDefaults(), new SshSettings("root", 22, TestEstate.SSH_KEY, TestEstate.KNOWN_HOSTS, null),
        DrainOptions.defaults(), 300, 0, "amd64"), request.template());
    assertEquals(new Artifact("k3s", ArtifactKind.BINARY, "https://releases.example/" + TestEstate.TO + "/k3s",
        "ab".repeat(32), 67108864, "/usr/local/bin/k3s", "0755"), request.template().artifacts().get(0));
    assertEquals(0, request.soakSeconds());
    assertNull(request.window());
    // The run's static summary and details, as the Temporal UI shows them (from the server).
    io.temporal.client.WorkflowExecutionDescription described = h.client.newUntypedWorkflowStub(id).describe();
    assertEquals("Upgrade the control plane of fleet/" + cr.getSpec().getClusterName() + " to " + TestEstate.TO
        + " (ControlPlaneUpgrade fleet/to-1-31)", described.getStaticSummary());
    assertTrue(described.getStaticDetails().contains("- started by: ControlPlaneUpgrade fleet/to-1-31"),
        described.getStaticDetails());

    h.signal(id, FakeRun.FINISH);
    h.awaitStatus(cr, s -> "1/2".equals(s.getProgress()));
    h.signal(id, FakeRun.FINISH);
    UpgradeStatus done = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.SUCCEEDED);

    assertEquals("2/2", done.getProgress());
    assertEquals(2, done.getCounts().getUpgraded());
    assertTrue(done.getNodes().stream().allMatch(n -> "Upgraded".equals(n.getPhase())));
    assertEquals(List.of("cp-0", "cp-1"), done.getNodes().stream().map(NodeRecord::getNode).toList());
    assertNotNull(done.getNodes().get(0).getStarted());
    assertNotNull(done.getCompletionTime());
    assertEquals("inplace-pre-v1-31-2-k3s1", done.getEtcdSnapshot());
    assertTrue(condition(UpgradeCondition.READY, true, Reasons.SUCCEEDED).test(done));
    assertTrue(condition(UpgradeCondition.PROGRESSING, false, Reasons.SUCCEEDED).test(done));
    assertTrue(condition(UpgradeCondition.FAILED, false, Reasons.NO_FAILURE).test(done));
    assertEquals(1L, done.getObservedGeneration());
    assertTrue(done.condition(UpgradeCondition.DRAIN_SKIPPED).isEmpty(), "several nodes: drained as usual");
    assertEquals(1, done.getHistory().size(), "the ended run is in status.history");
    assertEquals(id, done.getHistory().get(0).getWorkflowId());
    assertEquals(TestEstate.FROM, done.getHistory().get(0).getFromVersion());
    assertEquals(TestEstate.TO, done.getHistory().get(0).getToVersion());
    assertEquals("Succeeded", done.getHistory().get(0).getResult());
    assertEquals(2, done.getHistory().get(0).getUpgraded());
    assertNotNull(done.getHistory().get(0).getStarted());
    assertNotNull(done.getHistory().get(0).getFinished());
    await().atMost(WatcherHarness.WAIT).until(() -> h.eventReasons(cr).containsAll(
        List.of(Reasons.STARTED, Reasons.NODE_STARTED, Reasons.NODE_UPGRADED, Reasons.SUCCEEDED)));
    assertEquals(2, h.eventReasons(cr).stream().filter(Reasons.NODE_UPGRADED::equals).count());
    assertEquals(List.of(id), h.starts);
  }

  @Test
  void aOneMachineClusterIsUpgradedWithoutDrainAndTheResourceSaysWhy() {
    // Leave the cluster with its first control-plane Machine only (k3s's single server).
    for (String machine : client.genericKubernetesResources(dev.inplace.activities.capi.CapiResources.MACHINE)
        .inNamespace(TestEstate.NAMESPACE).list().getItems().stream().map(m -> m.getMetadata().getName()).toList()) {
      if (!machine.equals(TestEstate.CLUSTER + "-cp-0")) {
        client.genericKubernetesResources(dev.inplace.activities.capi.CapiResources.MACHINE)
            .inNamespace(TestEstate.NAMESPACE).withName(machine).delete();
      }
    }
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("single");

    UpgradeStatus started = h.awaitStatus(cr, s -> s.started());

    assertTrue(condition(UpgradeCondition.DRAIN_SKIPPED, true, Reasons.SINGLE_NODE_CLUSTER).test(started));
    assertTrue(started.condition(UpgradeCondition.DRAIN_SKIPPED).orElseThrow().getMessage().contains("nowhere to evict"));
    assertTrue(h.request(runId(cr), ControlPlaneUpgradeRequest.class).template().drain().skip(),
        "the run is started with the drain skipped");
  }

  @Test
  void duplicateEventsASecondWatcherAndARestartNeverStartASecondRun() throws Exception {
    // Two watchers at once (as if leader election failed) re-delivering every CR each second.
    UpgradeWatcher first = h.watcher(WatcherHarness.fast());
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("twice");
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty());
    Thread.sleep(2500); // several resyncs and status ticks of both
    first.close();
    h.watcher(WatcherHarness.fast()); // a restarted worker
    h.signal(id, FakeRun.FINISH);
    h.awaitStatus(cr, s -> "1/2".equals(s.getProgress()));
    Thread.sleep(1500);

    assertEquals(List.of(id), h.starts);
    assertEquals(List.of(id), h.controlPlane("twice").getStatus().getWorkflowIds());
  }

  @Test
  void aWatcherThatLostTheStatusOfAStartedRunFindsTheRunAndItsFrozenSpecInsteadOfStartingAnother() {
    UpgradeWatcher first = h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("lost");
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty());
    first.close();
    // As if the worker died between starting the run and recording it, and the spec changed meanwhile.
    ControlPlaneUpgrade stored = h.controlPlane("lost");
    stored.setStatus(new UpgradeStatus());
    h.kube.resource(stored).updateStatus();
    assertNull(h.controlPlane("lost").getStatus().getWorkflowIds());
    assertTrue(h.controlPlane("lost").getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER));
    h.kube.resources(ControlPlaneUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName("lost")
        .edit(c -> { c.getSpec().setSoakSeconds(30L); return c; });

    h.watcher(WatcherHarness.fast());
    UpgradeStatus found = h.awaitStatus(cr, s -> s.getWorkflowIds() != null && s.getNodes() != null);
    assertEquals(List.of(id), found.getWorkflowIds());
    assertEquals(1L, found.getFrozenGeneration(), "the run keeps the spec it was started with");
    UpgradeStatus refused = h.awaitStatus(cr, condition(UpgradeCondition.SPEC_ACCEPTED, false, Reasons.SPEC_CHANGE_REFUSED));
    assertEquals(UpgradePhase.RUNNING, refused.getPhase());
    assertEquals(List.of(id), h.starts);
  }

  @Test
  void pausedInTheSpecPausesTheRunAndFalseResumesIt() {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("pausable");
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty());

    h.kube.resources(ControlPlaneUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName("pausable")
        .edit(c -> { c.getSpec().setPaused(true); return c; });
    UpgradeStatus paused = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.PAUSED);
    assertTrue(condition(UpgradeCondition.PAUSED, true, Reasons.PAUSED).test(paused));
    assertTrue(condition(UpgradeCondition.SPEC_ACCEPTED, true, Reasons.SPEC_FROZEN).test(paused), "paused may change");
    assertTrue(h.progress(id).paused());

    // The node in flight finishes; the next one does not start while paused.
    h.signal(id, FakeRun.FINISH);
    UpgradeStatus oneDone = h.awaitStatus(cr, s -> "1/2".equals(s.getProgress()));
    assertEquals("Pending", oneDone.getNodes().get(1).getPhase());

    h.kube.resources(ControlPlaneUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName("pausable")
        .edit(c -> { c.getSpec().setPaused(false); return c; });
    UpgradeStatus resumed = h.awaitStatus(cr, s -> "Upgrading".equals(s.getNodes().get(1).getPhase()));
    assertEquals(UpgradePhase.RUNNING, resumed.getPhase());
    assertTrue(condition(UpgradeCondition.PAUSED, false, Reasons.NOT_PAUSED).test(resumed));
    await().atMost(WatcherHarness.WAIT).until(() -> h.eventReasons(cr).containsAll(List.of(Reasons.PAUSED, Reasons.RESUMED)));
  }

  @Test
  void aSpecChangeAfterTheStartIsRefusedAndTheRunKeepsItsTarget() {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("frozen");
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty());

    h.kube.resources(ControlPlaneUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName("frozen")
        .edit(c -> { c.getSpec().setVersion("v1.31.3+k3s1"); return c; });
    UpgradeStatus refused = h.awaitStatus(cr, condition(UpgradeCondition.SPEC_ACCEPTED, false, Reasons.SPEC_CHANGE_REFUSED));
    assertEquals(2L, refused.getObservedGeneration());
    assertEquals(1L, refused.getFrozenGeneration());
    assertEquals(UpgradePhase.RUNNING, refused.getPhase());
    assertEquals(TestEstate.TO, h.request(id, ControlPlaneUpgradeRequest.class).template().targetVersion());
    await().atMost(WatcherHarness.WAIT).until(() -> h.eventReasons(cr).contains(Reasons.SPEC_CHANGE_REFUSED));

    h.kube.resources(ControlPlaneUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName("frozen")
        .edit(c -> { c.getSpec().setVersion(TestEstate.TO); return c; });
    h.awaitStatus(cr, condition(UpgradeCondition.SPEC_ACCEPTED, true, Reasons.SPEC_FROZEN));
    assertEquals(List.of(id), h.starts);
  }

  @Test
  void deletingMidRunAbortsLetsTheNodeInFlightFinishAndOnlyThenRemovesTheFinalizer() throws Exception {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("deleted");
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty() && "Upgrading".equals(s.getNodes().get(0).getPhase()));

    h.kube.resource(h.controlPlane("deleted")).delete();
    await().atMost(WatcherHarness.WAIT).until(() -> h.progress(id).phase() == RunPhase.ABORTING);
    UpgradeStatus aborting = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.ABORTING);
    assertTrue(condition(UpgradeCondition.PROGRESSING, true, Reasons.ABORTING).test(aborting));
    Thread.sleep(1000);
    assertNotNull(h.controlPlane("deleted"), "the finalizer holds the resource while its run has a node in flight");

    h.signal(id, FakeRun.FINISH);
    await().atMost(WatcherHarness.WAIT).until(() -> h.controlPlane("deleted") == null);
    var finalProgress = h.progress(id);
    assertEquals(RunPhase.ABORTED, finalProgress.phase());
    assertEquals("Upgraded", Texts.camel(finalProgress.nodes().get(0).phase()), "the node in flight finished its upgrade");
    assertEquals("Pending", Texts.camel(finalProgress.nodes().get(1).phase()), "no new node was started");
    assertTrue(h.eventReasons(cr).contains(Reasons.ABORTING));
  }

  @Test
  void deletingWhenTheAbortTakesTooLongCancelsTheRunWhichRollsTheNodeInFlightBack() {
    h.watcher(WatcherHarness.fast().withAbortGracePeriod(Duration.ofSeconds(1)));
    ControlPlaneUpgrade cr = create("stuck");
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty() && "Upgrading".equals(s.getNodes().get(0).getPhase()));

    h.kube.resource(h.controlPlane("stuck")).delete();
    await().atMost(WatcherHarness.WAIT).until(() -> h.controlPlane("stuck") == null);

    var after = h.progress(id);
    assertEquals(RunPhase.ABORTED, after.phase());
    assertEquals("RolledBack", Texts.camel(after.nodes().get(0).phase()));
    assertEquals(UpgradeFailures.CANCELLED, after.nodes().get(0).reason());
  }

  @Test
  void aNodeFailureHaltsTheRunAndTheResourceSaysWhy() {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = create("failing");
    String id = runId(cr);
    h.awaitStatus(cr, s -> s.getNodes() != null && !s.getNodes().isEmpty() && "Upgrading".equals(s.getNodes().get(0).getPhase()));

    h.signal(id, FakeRun.FAIL);
    UpgradeStatus halted = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.HALTED);
    assertTrue(condition(UpgradeCondition.FAILED, true, UpgradeFailures.SERVICE_RESTART_FAILED).test(halted));
    assertTrue(condition(UpgradeCondition.PROGRESSING, false, Reasons.HALTED).test(halted));
    NodeRecord node = halted.getNodes().get(0);
    assertEquals("RolledBack", node.getPhase());
    assertEquals("restart", node.getStep());
    assertEquals(1, halted.getCounts().getFailed());
    await().atMost(WatcherHarness.WAIT).until(() -> h.eventReasons(cr).containsAll(List.of(Reasons.NODE_ROLLED_BACK, Reasons.HALTED)));
    assertNull(halted.getCompletionTime());
  }
}
