package dev.inplace.sandbox.infra;

import static dev.inplace.sandbox.infra.CapiEstate.KUBEADM_CONTROL_PLANES;
import static dev.inplace.sandbox.infra.CapiEstate.MACHINE_DEPLOYMENTS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.hosts.BinaryStart;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.time.Duration;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 31, the custom-resource door on real Cluster API. First the ground every in-place proof on
 * real CAPI stands on: CAPI v1.13's core, KubeadmControlPlane and kubeadm bootstrap managers
 * provision a kubeadm cluster through the sandbox's infrastructure provider (every Machine Running
 * with its Node on the real workload API server). Then, with the managers running the whole time (and no runtime extension registered), a
 * ControlPlaneUpgrade and a WorkersUpgrade upgrade a kubeadm cluster's five nodes over SSH, record the
 * version where CAPI compares it, and CAPI then sees every Machine as up to date: no Machine created
 * or deleted (names and UIDs before equal after), no new MachineSet, every Machine's UpToDate
 * condition True, the control plane's and the MachineDeployment's status counts agreeing, and nothing
 * rolling out after a forced resync and a settle period.
 *
 * <p>Real and simulated as in {@link RealCapiBed}. The worker's activities use the management plane's
 * administrator client, not the worker's RBAC (RbacCoverageIT judges that).
 */
@Timeout(1500)
class KubeadmCrDoorOnRealCapiIT {
  static final String FROM = "v1.30.6";
  static final String TO = "v1.30.7";
  static final Duration SETTLE = Duration.ofSeconds(20);

  @TempDir static Path dir;
  static RealCapiBed bed;
  static CapiEstate estate;
  static KubernetesClient mgmt;
  static TemporalConnection temporal;
  static InplaceWorker worker;
  static UpgradeWatcher watcher;

  @BeforeAll
  static void startTestBed() throws Exception {
    bed = RealCapiBed.start(dir, List.of(FROM, TO), false);
    estate = bed.estate();
    mgmt = bed.managementClient();
    InplaceCrds.install(mgmt);
    ArtifactSourcePolicy artifacts = ArtifactSourcePolicy.mirror(bed.releases().artifactsDir());
    temporal = EmbeddedTemporal.start();
    worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, mgmt, dir.resolve("artifact-cache"), artifacts);
    watcher = UpgradeWatcher.start(mgmt, temporal.client(), WorkflowIds.TASK_QUEUE,
        WatcherOptions.defaults().withStatusInterval(Duration.ofSeconds(1)), artifacts);
    bed.seed(FROM, 3, 2);
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : new AutoCloseable[] {watcher, worker, temporal, bed}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // best effort
      }
    }
  }

  @Test
  void customResourcesUpgradeEveryNodeInPlaceAndRealCapiReplacesNoMachine() throws Exception {
    estate.await("5 Machines Running at " + FROM, Duration.ofMinutes(6), () -> estate.provisioned(3, 2));
    // The ground: the real controllers provisioned every Machine through the sandbox's provider, each
    // with its Node on the real workload API server, and initialized the control plane.
    for (GenericKubernetesResource m : estate.machines()) {
      String node = String.valueOf(((Map<?, ?>) CapiEstate.status(m).get("nodeRef")).get("name"));
      assertEquals(SandboxInfraProvider.providerId(RealCapiBed.NAMESPACE, m.getMetadata().getName()),
          bed.workloadClient().nodes().withName(node).get().getSpec().getProviderID(), node + "'s providerID");
      assertEquals(FROM, CapiEstate.spec(m).get("version"));
    }
    assertEquals(Boolean.TRUE, ((Map<?, ?>) CapiEstate.status(estate.get(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE))
        .get("initialization")).get("controlPlaneInitialized"), "the control plane is initialized");
    Map<String, String> before = estate.machineUids();
    List<String> setsBefore = estate.machineSetNames();
    assertEquals(1, setsBefore.size(), "one MachineSet before: " + setsBefore);

    long started = System.nanoTime();
    mgmt.resource(BedUpgradeResources.controlPlane(bed.ssh(), Distribution.KUBEADM, TO)).create();
    awaitSucceeded(ControlPlaneUpgrade.class, BedUpgradeResources.CONTROL_PLANE, before);
    long controlPlaneSeconds = (System.nanoTime() - started) / 1_000_000_000L;

    started = System.nanoTime();
    mgmt.resource(BedUpgradeResources.workers(bed.ssh(), Distribution.KUBEADM, TO)).create();
    awaitSucceeded(WorkersUpgrade.class, BedUpgradeResources.WORKERS, before);
    long workersSeconds = (System.nanoTime() - started) / 1_000_000_000L;
    System.out.printf("custom-resource door on real CAPI (%s): control plane in %d s, workers in %d s%n",
        bed.capi().version(), controlPlaneSeconds, workersSeconds);

    // CAPI agrees: every Machine up to date at the target, the counts settled on the same Machines.
    estate.await("every Machine UpToDate at " + TO + " and the counts agreeing", Duration.ofMinutes(2),
        () -> estate.sameMachines(before) && allUpToDate() && countsAgree());
    assertEquals(setsBefore, estate.machineSetNames(), "no new MachineSet: the workers' MachineSet records the version in place");

    // A forced resync of every object, then a settle period: nothing rolls out.
    estate.forceResync();
    long settleUntil = System.nanoTime() + SETTLE.toNanos();
    while (System.nanoTime() < settleUntil) {
      estate.sameMachines(before);
      assertEquals(setsBefore, estate.machineSetNames(), "no MachineSet created after the resync");
      assertTrue(allUpToDate(), "every Machine stays UpToDate after the resync" + estate.summary());
      Thread.sleep(2000);
    }
    assertTrue(countsAgree(), "counts after the resync" + estate.summary());

    // Ground truth on each host: the target's kubelet is the file in place and it was (re)started.
    String target = bed.releases().release(TO).binary("kubelet").sha256();
    List<BinaryStart> starts = bed.kubelets().binaryStarts();
    for (String machine : before.keySet()) {
      assertEquals(target, sha256(bed.hosts().host(machine).root().resolve("usr/bin/kubelet")), machine + " has the " + TO + " kubelet");
      assertTrue(starts.stream().anyMatch(s -> s.node().equals(machine) && s.sha256().equals(target)),
          machine + " restarted its kubelet on the " + TO + " binary: " + starts);
      assertEquals(TO, bed.workloadClient().nodes().withName(machine).get().getStatus().getNodeInfo().getKubeletVersion(), machine + "'s Node");
    }
    assertTrue(bed.capi().allAlive(), "every Cluster API manager still runs");
    assertEquals(java.util.Optional.of(bed.capi().version()), bed.capi().runningVersion(),
        "the running core manager reports the pinned Cluster API release");
  }

  /** Waits for the resource to end; fails at once when CAPI replaced a Machine meanwhile, and unless it Succeeded. */
  private static <T extends CustomResource<?, UpgradeStatus>> void awaitSucceeded(Class<T> type, String name, Map<String, String> before) {
    UpgradeStatus status = BedUpgradeResources.awaitEnd(estate, mgmt, type, name, Duration.ofMinutes(8),
        () -> estate.sameMachines(before));
    assertEquals(UpgradePhase.SUCCEEDED, status.getPhase(), name + ": " + status.getMessage() + estate.summary());
  }

  private static boolean allUpToDate() {
    return estate.machines().stream().allMatch(m -> CapiEstate.upToDateAt(m, TO));
  }

  /** replicas, readyReplicas, upToDateReplicas and availableReplicas all equal the Machines there are. */
  private static boolean countsAgree() {
    for (String field : List.of("replicas", "readyReplicas", "upToDateReplicas", "availableReplicas")) {
      if (estate.count(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE, field) != 3
          || estate.count(MACHINE_DEPLOYMENTS, KubeadmClusterSeed.MACHINE_DEPLOYMENT, field) != 2) {
        return false;
      }
    }
    GenericKubernetesResource kcp = estate.get(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE);
    return TO.equals(CapiEstate.spec(kcp).get("version"));
  }

  static String sha256(Path file) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }
}
