package dev.inplace.worker.watch;

import static dev.inplace.worker.watch.WatcherHarness.condition;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.ControlPlaneUpgradeSpec;
import dev.inplace.worker.crd.HostLayoutSpec;
import dev.inplace.worker.crd.HostProfileSpec;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.MaintenanceWindowSpec;
import dev.inplace.worker.crd.UpgradeCondition;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.List;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/** Each kind of bad input gets Failed with its own reason, and nothing is started or marked. */
@EnableKubernetesMockClient(crud = true, https = false)
@Timeout(120)
class BadInputTest {
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

  record Case(
      String name,
      Consumer<TestEstate> setup,
      Supplier<CustomResource<? extends UpgradeSpec<?>, UpgradeStatus>> resource,
      String reason,
      String mentions) {
    @Override
    public String toString() {
      return name;
    }
  }

  private static Case cp(String name, Consumer<ControlPlaneUpgradeSpec> change, String reason, String mentions) {
    return new Case(name, e -> {}, () -> {
      ControlPlaneUpgradeSpec spec = TestEstate.spec(new ControlPlaneUpgradeSpec());
      change.accept(spec);
      return TestEstate.controlPlaneUpgrade("bad", spec);
    }, reason, mentions);
  }

  private static Case workers(String name, Consumer<WorkersUpgradeSpec> change, String reason, String mentions) {
    return new Case(name, e -> {}, () -> {
      WorkersUpgradeSpec spec = TestEstate.spec(new WorkersUpgradeSpec());
      change.accept(spec);
      return TestEstate.workersUpgrade("bad", spec);
    }, reason, mentions);
  }

  private static Case withEstate(Case c, Consumer<TestEstate> setup) {
    return new Case(c.name(), setup, c.resource(), c.reason(), c.mentions());
  }

  static Stream<Case> cases() {
    return Stream.of(
        cp("unknown cluster", s -> s.setClusterName("nowhere"), UpgradeFailures.CLUSTER_NOT_FOUND, "nowhere"),
        cp("downgrade", s -> s.setVersion("v1.29.3+k3s1"), UpgradeFailures.UNSUPPORTED_VERSION_SKEW, "downgrade"),
        workers("minor-version skip", s -> s.setVersion("v1.32.1+k3s1"), UpgradeFailures.UNSUPPORTED_VERSION_SKEW,
            "2 minors behind"),
        withEstate(cp("missing SSH key Secret", s -> {}, UpgradeFailures.SECRET_NOT_FOUND, TestEstate.SSH_KEY),
            e -> e.deleteSecret(TestEstate.SSH_KEY)),
        withEstate(workers("missing kubeconfig Secret", s -> {}, UpgradeFailures.SECRET_NOT_FOUND, "edge-kubeconfig"),
            e -> e.deleteSecret("edge-kubeconfig")),
        workers("maxUnavailable 0", s -> s.setMaxUnavailable(new IntOrString(0)), UpgradeFailures.INVALID_REQUEST,
            "maxUnavailable"),
        workers("maxUnavailable 150%", s -> s.setMaxUnavailable(new IntOrString("150%")), UpgradeFailures.INVALID_REQUEST,
            "150%"),
        workers("unknown MachineDeployment", s -> s.setMachineDeployments(List.of("md-a", "md-z")),
            UpgradeFailures.INVALID_REQUEST, "md-z"),
        cp("missing catalogue ConfigMap", s -> s.setReleaseCatalogue(new CatalogueReference("nope", null)),
            UpgradeFailures.ARTIFACT_UNAVAILABLE, "nope"),
        cp("version not in the catalogue", s -> s.setVersion("v1.31.3+k3s1"), UpgradeFailures.ARTIFACT_UNAVAILABLE,
            "v1.31.3+k3s1"),
        cp("not a version", s -> s.setVersion("1.31"), UpgradeFailures.INVALID_REQUEST, "1.31"),
        cp("bad maintenance window", s -> s.setMaintenanceWindow(new MaintenanceWindowSpec().setStart("25:00").setEnd("04:00")),
            UpgradeFailures.INVALID_REQUEST, "25:00"),
        cp("a host path written in the resource (the old free-text form)",
            s -> s.setHostProfile(new HostProfileSpec().setBinDir("/usr/local/bin")), UpgradeFailures.INVALID_REQUEST,
            "spec.hostProfile.binDir (/usr/local/bin) is no longer accepted: host paths are not set in an upgrade"
                + " resource; an administrator creates an InplaceHostProfile with them and the resource names it in"
                + " spec.hostProfile.name"),
        withEstate(workers("a host profile whose binDir is outside the layout",
            s -> s.setHostProfile(new HostProfileSpec().setName("evil")), UpgradeFailures.INVALID_REQUEST,
            "spec.hostProfile.name: InplaceHostProfile evil: binDir /run/evil is not a k3s directory"),
            e -> e.hostProfile("evil", new HostLayoutSpec().setBinDir("/run/evil"))));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void badInputFailsWithItsReasonAndTouchesNothing(Case c) throws Exception {
    c.setup().accept(h.estate);
    h.watcher(WatcherHarness.fast());
    CustomResource<? extends UpgradeSpec<?>, UpgradeStatus> cr = h.create(c.resource().get());

    UpgradeStatus status = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.FAILED);
    assertTrue(condition(UpgradeCondition.FAILED, true, c.reason()).test(status),
        "reason " + WatcherHarness.reason(status, UpgradeCondition.FAILED) + ": " + status.getMessage());
    assertTrue(status.getMessage().contains(c.mentions()), status.getMessage());
    assertEquals(1L, status.getObservedGeneration());
    Thread.sleep(500);
    assertEquals(List.of(), h.starts, "no workflow was started");
    CustomResource<?, ?> stored = h.kube.resource(cr).get();
    assertFalse(stored.getMetadata().getFinalizers().contains(InplaceCrds.FINALIZER));
    assertTrue(h.eventReasons(cr).contains(c.reason()));
  }

  @Test
  void fixingARefusedSpecStartsTheRun() {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade cr = h.create(TestEstate.controlPlaneUpgrade("fixed",
        TestEstate.spec(new ControlPlaneUpgradeSpec()).setVersion("v1.31.3+k3s1")));
    h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.FAILED);

    h.kube.resources(ControlPlaneUpgrade.class).inNamespace(TestEstate.NAMESPACE).withName("fixed")
        .edit(c -> { c.getSpec().setVersion(TestEstate.TO); return c; });
    UpgradeStatus started = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.RUNNING);
    assertEquals(2L, started.getObservedGeneration());
    assertEquals(2L, started.getFrozenGeneration());
    assertTrue(condition(UpgradeCondition.FAILED, false, Reasons.NO_FAILURE).test(started));
    assertEquals(1, h.starts.size());
  }

  @Test
  void aSecondUpgradeOfTheSameClusterIsRefusedWhileTheFirstRuns() {
    h.watcher(WatcherHarness.fast());
    ControlPlaneUpgrade first = h.create(TestEstate.controlPlaneUpgrade("first", TestEstate.spec(new ControlPlaneUpgradeSpec())));
    h.awaitStatus(first, s -> s.getPhase() == UpgradePhase.RUNNING);
    ControlPlaneUpgrade second = h.create(TestEstate.controlPlaneUpgrade("second", TestEstate.spec(new ControlPlaneUpgradeSpec())));

    UpgradeStatus refused = h.awaitStatus(second, s -> s.getPhase() == UpgradePhase.FAILED);
    assertTrue(condition(UpgradeCondition.FAILED, true, Reasons.CONFLICTING_UPGRADE).test(refused));
    assertTrue(refused.getMessage().contains("first"), refused.getMessage());
    assertEquals(1, h.starts.size());
  }

  @Test
  void aMachineDeploymentListedTwiceIsRefused() {
    h.watcher(WatcherHarness.fast());
    WorkersUpgrade cr = h.create(TestEstate.workersUpgrade("none", TestEstate.spec(new WorkersUpgradeSpec())
        .setMachineDeployments(List.of("md-a", "md-a"))));
    UpgradeStatus refused = h.awaitStatus(cr, s -> s.getPhase() == UpgradePhase.FAILED);
    assertTrue(condition(UpgradeCondition.FAILED, true, UpgradeFailures.INVALID_REQUEST).test(refused));
  }

  @Test
  void aClusterClassClusterIsRefusedAsTopologyManagedAndNothingStarts() {
    h.estate.topology("k3s-edge");
    h.watcher(WatcherHarness.fast());
    WorkersUpgrade workers = h.create(TestEstate.workersUpgrade("cc-workers", TestEstate.spec(new WorkersUpgradeSpec())));
    ControlPlaneUpgrade cp = h.create(TestEstate.controlPlaneUpgrade("cc-cp", TestEstate.spec(new ControlPlaneUpgradeSpec())));
    for (UpgradeStatus refused : List.of(h.awaitStatus(workers, s -> s.getPhase() == UpgradePhase.FAILED),
        h.awaitStatus(cp, s -> s.getPhase() == UpgradePhase.FAILED))) {
      assertTrue(condition(UpgradeCondition.FAILED, true, UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER).test(refused));
      assertTrue(refused.getMessage().contains("ClusterClass k3s-edge"), refused.getMessage());
    }
    assertEquals(0, h.starts.size());
  }
}
