package dev.inplace.sandbox.infra;

import static dev.inplace.sandbox.infra.CapiEstate.KUBEADM_CONTROL_PLANES;
import static dev.inplace.sandbox.infra.CapiEstate.MACHINE_DEPLOYMENTS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.hosts.BinaryStart;
import dev.inplace.testbed.TestCa;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.extension.CapiExtension;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.api.common.v1.WorkflowExecution;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 31, a ClusterClass cluster through the hook door on real Cluster API: the cluster is
 * topology-managed ({@link ClusterClassSeed}: the topology controller created its
 * KubeadmControlPlane and MachineDeployment from the class), the user changes only {@code
 * spec.topology.version}, the topology controller moves the control plane and then the workers to
 * it, and CAPI v1.13.6's in-place flow calls inplace's extension for each Machine as in {@link
 * KubeadmHookDoorOnRealCapiIT} (which says what is real and what simulated): no Machine is created
 * or deleted, each ends up to date at the target with inplace's NodeUpgrade run completed and the
 * target's kubelet on its host.
 */
@Timeout(1200)
class KubeadmClusterClassHookDoorOnRealCapiIT {
  static final String FROM = "v1.30.6";
  static final String TO = "v1.30.7";

  @TempDir static Path dir;
  static RealCapiBed bed;
  static CapiEstate estate;
  static KubernetesClient mgmt;
  static TemporalConnection temporal;
  static InplaceWorker worker;
  static CapiExtension extension;

  @BeforeAll
  static void startTestBed() throws Exception {
    bed = RealCapiBed.start(dir, List.of(FROM, TO), true);
    estate = bed.estate();
    mgmt = bed.managementClient();
    ArtifactSourcePolicy artifacts = ArtifactSourcePolicy.mirror(bed.releases().artifactsDir());
    temporal = EmbeddedTemporal.start();
    worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, mgmt, dir.resolve("artifact-cache"), artifacts);
    TestCa.Issued serving = bed.management().ca().server("inplace-extension");
    extension = CapiExtension.start(ExtensionOptions.loopback(serving.cert(), serving.key(), bed.management().ca().certificate()),
        mgmt, temporal.client(), WorkflowIds.TASK_QUEUE, artifacts);
    bed.registerExtension(extension.port());
    bed.seedWithClusterClass(FROM, 3, 2, ClusterClassSeed.Upgrade.NONE);
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : new AutoCloseable[] {extension, worker, temporal, bed}) {
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
  void changingOnlyTheTopologyVersionUpgradesEveryMachineInPlaceThroughTheHooks() throws Exception {
    estate.await("5 Machines Running at " + FROM, Duration.ofMinutes(6), () -> estate.provisioned(3, 2));
    // The topology controller made the control plane and the MachineDeployment from the class.
    for (GenericKubernetesResource owned : List.of(estate.get(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE),
        estate.get(MACHINE_DEPLOYMENTS, KubeadmClusterSeed.MACHINE_DEPLOYMENT))) {
      assertTrue(owned.getMetadata().getLabels().containsKey("topology.cluster.x-k8s.io/owned"),
          owned.getKind() + " is managed by the topology controller: " + owned.getMetadata().getLabels());
    }
    Map<String, String> before = estate.machineUids();

    long started = System.nanoTime();
    ClusterClassSeed.upgrade(estate, TO);
    estate.await("every Machine up to date at " + TO, Duration.ofMinutes(10),
        () -> estate.sameMachines(before) && estate.machines().stream().allMatch(m -> CapiEstate.upToDateAt(m, TO)));
    long seconds = (System.nanoTime() - started) / 1_000_000_000L;

    Map<String, Long> calls = extension.answeredCalls();
    System.out.printf("ClusterClass hook door on real CAPI: every Machine in %d s, hook calls %s%n", seconds, calls);
    assertEquals(TO, CapiEstate.spec(estate.get(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE)).get("version"),
        "the topology controller set the control plane's version");
    assertTrue(calls.getOrDefault("CanUpdateMachine/Success", 0L) >= 3, "KCP asked CanUpdateMachine for each control plane: " + calls);
    assertTrue(calls.getOrDefault("CanUpdateMachineSet/Success", 0L) >= 1, "the MachineDeployment asked CanUpdateMachineSet: " + calls);
    assertTrue(calls.getOrDefault("UpdateMachine/Success", 0L) >= 5, "the Machine controller called UpdateMachine for each Machine: " + calls);
    assertEquals(before, estate.machineUids(), "Machines (name -> UID) before and after");

    for (GenericKubernetesResource m : estate.machines()) {
      String run = m.getMetadata().getAnnotations().get("upgrade.inplace.dev/update-run");
      assertTrue(run != null && run.startsWith("node-upgrade-hook/" + RealCapiBed.NAMESPACE + "/" + m.getMetadata().getName() + "/"),
          m.getMetadata().getName() + " names its run: " + run);
      assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, runStatus(run), run);
    }
    String target = bed.releases().release(TO).binary("kubelet").sha256();
    List<BinaryStart> starts = bed.kubelets().binaryStarts();
    for (String machine : before.keySet()) {
      assertEquals(target, KubeadmCrDoorOnRealCapiIT.sha256(bed.hosts().host(machine).root().resolve("usr/bin/kubelet")),
          machine + " has the " + TO + " kubelet installed");
      assertTrue(starts.stream().anyMatch(s -> s.node().equals(machine) && s.sha256().equals(target)),
          machine + " restarted its kubelet on the " + TO + " binary: " + starts);
      assertEquals(TO, bed.workloadClient().nodes().withName(machine).get().getStatus().getNodeInfo().getKubeletVersion(), machine + "'s Node");
    }
    assertTrue(bed.capi().allAlive(), "every Cluster API manager still runs");
  }

  static WorkflowExecutionStatus runStatus(String workflowId) {
    return temporal.client().getWorkflowServiceStubs().blockingStub().describeWorkflowExecution(
        DescribeWorkflowExecutionRequest.newBuilder().setNamespace(temporal.client().getOptions().getNamespace())
            .setExecution(WorkflowExecution.newBuilder().setWorkflowId(workflowId).build()).build())
        .getWorkflowExecutionInfo().getStatus();
  }
}
