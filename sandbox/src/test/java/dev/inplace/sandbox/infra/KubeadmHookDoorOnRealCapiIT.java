package dev.inplace.sandbox.infra;

import static dev.inplace.sandbox.infra.CapiEstate.KUBEADM_CONTROL_PLANES;
import static dev.inplace.sandbox.infra.CapiEstate.MACHINE_DEPLOYMENTS;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
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
 * Issue 31, the hook door driven by real Cluster API: CAPI v1.13.6's core, KubeadmControlPlane and
 * kubeadm bootstrap managers (InPlaceUpdates, RuntimeSDK) call inplace's runtime extension
 * (the worker's HookServer, mutual TLS with the management plane's CA, registered by an
 * ExtensionConfig with url + caBundle and deploy/extension's namespaceSelector) when the user
 * changes the KubeadmControlPlane's and the MachineDeployment's version; the extension's
 * NodeUpgrade runs (the real activities, on an in-process Temporal server) upgrade every node over
 * SSH, and CAPI marks every Machine up to date without creating or deleting one.
 *
 * <p>Real: etcd, both kube-apiservers, kube-controller-manager, the three CAPI managers, the
 * ExtensionConfig discovery, the hook calls over mutual TLS, the {@code <cluster>-kubeconfig} Secret
 * KCP generated (the activities reach the workload cluster through it). Simulated: each Machine's
 * host (a sandbox SSH server per Machine on its own 127.0.0.N, running the sandbox's stand-ins for
 * kubelet, kubeadm and systemctl against a directory), and the kubelet (the KubeletSimulator writes
 * each Node's status from the kubelet binary installed on its host). The worker's activities use the
 * management plane's administrator client, not the worker's RBAC (RbacCoverageIT judges that).
 */
@Timeout(1200)
class KubeadmHookDoorOnRealCapiIT {
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
    bed.seed(FROM, 3, 2);
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
  void realCapiUpgradesEveryMachineInPlaceThroughTheHooksWithoutReplacingOne() throws Exception {
    estate.await("5 Machines Running at " + FROM, Duration.ofMinutes(6), () -> estate.provisioned(3, 2));
    Map<String, String> before = estate.machineUids();
    List<String> setsBefore = estate.machineSetNames();
    assertEquals(1, setsBefore.size(), "one MachineSet before: " + setsBefore);

    // The user's change: a patch release on the control plane, then (once it is there) on the workers.
    long started = System.nanoTime();
    estate.mergePatchSpec(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE, "{\"spec\":{\"version\":\"" + TO + "\"}}");
    estate.await("3 control-plane Machines up to date at " + TO, Duration.ofMinutes(8),
        () -> estate.sameMachines(before) && estate.machines().stream().filter(CapiEstate::controlPlane)
            .allMatch(m -> CapiEstate.upToDateAt(m, TO)));
    long controlPlaneSeconds = (System.nanoTime() - started) / 1_000_000_000L;
    started = System.nanoTime();
    estate.mergePatchSpec(MACHINE_DEPLOYMENTS, KubeadmClusterSeed.MACHINE_DEPLOYMENT,
        "{\"spec\":{\"template\":{\"spec\":{\"version\":\"" + TO + "\"}}}}");
    estate.await("every Machine up to date at " + TO, Duration.ofMinutes(8),
        () -> estate.sameMachines(before) && estate.machines().stream().allMatch(m -> CapiEstate.upToDateAt(m, TO)));
    long workersSeconds = (System.nanoTime() - started) / 1_000_000_000L;

    Map<String, Long> calls = extension.answeredCalls();
    System.out.printf("hook door on real CAPI: control plane in %d s, workers in %d s, hook calls %s%n",
        controlPlaneSeconds, workersSeconds, calls);
    assertTrue(calls.getOrDefault("CanUpdateMachine/Success", 0L) >= 3, "KCP asked CanUpdateMachine for each control plane: " + calls);
    assertTrue(calls.getOrDefault("CanUpdateMachineSet/Success", 0L) >= 1, "the MachineDeployment asked CanUpdateMachineSet: " + calls);
    assertTrue(calls.getOrDefault("UpdateMachine/Success", 0L) >= 5, "the Machine controller called UpdateMachine for each Machine: " + calls);

    // No Machine was created or deleted: the same names and UIDs.
    assertEquals(before, estate.machineUids(), "Machines (name -> UID) before and after");
    // The MachineDeployment's in-place flow moves its Machines to the MachineSet of the new template;
    // the emptied old one is deleted on a later reconcile (cleanupDeployment): one MachineSet, a new
    // one, owning both workers.
    estate.await("the old MachineSet deleted once empty", Duration.ofMinutes(2), () -> estate.machineSetNames().size() == 1);
    List<String> setsAfter = estate.machineSetNames();
    assertNotEquals(setsBefore.get(0), setsAfter.get(0), "the workers moved to the new template's MachineSet");
    for (GenericKubernetesResource m : estate.machines()) {
      if (!CapiEstate.controlPlane(m)) {
        assertEquals(setsAfter.get(0), m.getMetadata().getLabels().get("cluster.x-k8s.io/set-name"), m.getMetadata().getName());
      }
    }

    // Each Machine's update was inplace's NodeUpgrade run, which the extension started and recorded on it.
    for (GenericKubernetesResource m : estate.machines()) {
      String run = m.getMetadata().getAnnotations().get("upgrade.inplace.dev/update-run");
      assertTrue(run != null && run.startsWith("node-upgrade-hook/" + RealCapiBed.NAMESPACE + "/" + m.getMetadata().getName() + "/"),
          m.getMetadata().getName() + " names its run: " + run);
      assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, runStatus(run), run);
    }

    // Ground truth on each host: the target's kubelet is the file in place and it was (re)started.
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
