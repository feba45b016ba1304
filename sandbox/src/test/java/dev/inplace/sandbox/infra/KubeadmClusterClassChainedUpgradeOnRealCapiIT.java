package dev.inplace.sandbox.infra;

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
import dev.inplace.worker.extension.Hooks;
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
 * Issue 31, a chained upgrade of a ClusterClass cluster on real Cluster API: the class lists the
 * versions to pass through ({@code spec.kubernetesVersions}) and names inplace's GenerateUpgradePlan
 * handler; the user sets the topology version two minors ahead ({@value #FROM} -> {@value #TO}).
 * inplace's plan steps the control plane and the workers through {@value #STEP} (CAPI alone would
 * move the workers two minors at once, a skipped minor inplace declines), every step in place
 * through the hooks as in {@link KubeadmClusterClassHookDoorOnRealCapiIT}.
 *
 * <p>From v1.31, not v1.30: KubeadmControlPlane v1.13 adds the kubeadm feature gate
 * ControlPlaneKubeletLocalMode to the desired KubeadmConfig of a v1.31-v1.35 control plane, so a
 * v1.30 -> v1.31 control plane differs in more than its version and inplace declines it in place
 * (docs/capi-extension.md, section 9).
 */
@Timeout(1200)
class KubeadmClusterClassChainedUpgradeOnRealCapiIT {
  static final String FROM = "v1.31.4";
  static final String STEP = "v1.32.3";
  static final String TO = "v1.33.1";

  @TempDir static Path dir;
  static RealCapiBed bed;
  static CapiEstate estate;
  static KubernetesClient mgmt;
  static TemporalConnection temporal;
  static InplaceWorker worker;
  static CapiExtension extension;

  @BeforeAll
  static void startTestBed() throws Exception {
    bed = RealCapiBed.start(dir, List.of(FROM, STEP, TO), true);
    estate = bed.estate();
    mgmt = bed.managementClient();
    ArtifactSourcePolicy artifacts = ArtifactSourcePolicy.mirror(bed.releases().artifactsDir());
    temporal = EmbeddedTemporal.start();
    worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, mgmt, dir.resolve("artifact-cache"), artifacts);
    TestCa.Issued serving = bed.management().ca().server("inplace-extension");
    extension = CapiExtension.start(ExtensionOptions.loopback(serving.cert(), serving.key(), bed.management().ca().certificate()),
        mgmt, temporal.client(), WorkflowIds.TASK_QUEUE, artifacts);
    bed.registerExtension(extension.port());
    bed.seedWithClusterClass(FROM, 3, 2, new ClusterClassSeed.Upgrade(List.of(FROM, STEP, TO),
        Hooks.GENERATE_UPGRADE_PLAN_HANDLER + ".inplace"));
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
  void aTwoMinorUpgradeStepsTheControlPlaneAndTheWorkersOneMinorAtATimeByInplacesPlan() throws Exception {
    estate.await("5 Machines Running at " + FROM, Duration.ofMinutes(6), () -> estate.provisioned(3, 2));
    Map<String, String> before = estate.machineUids();

    long started = System.nanoTime();
    ClusterClassSeed.upgrade(estate, TO);
    estate.await("every Machine up to date at " + TO, Duration.ofMinutes(15),
        () -> estate.sameMachines(before) && estate.machines().stream().allMatch(m -> CapiEstate.upToDateAt(m, TO)));
    long seconds = (System.nanoTime() - started) / 1_000_000_000L;
    Map<String, Long> calls = extension.answeredCalls();
    System.out.printf("ClusterClass chained upgrade %s -> %s on real CAPI: %d s, hook calls %s%n", FROM, TO, seconds, calls);

    assertTrue(calls.getOrDefault("GenerateUpgradePlan/Success", 0L) >= 1, "the topology controller asked inplace's plan: " + calls);
    assertEquals(before, estate.machineUids(), "Machines (name -> UID) before and after");
    // Every node ran the intermediate kubelet on the way: the workers too stepped one minor at a time.
    String step = bed.releases().release(STEP).binary("kubelet").sha256();
    String target = bed.releases().release(TO).binary("kubelet").sha256();
    List<BinaryStart> starts = bed.kubelets().binaryStarts();
    for (String machine : before.keySet()) {
      assertTrue(starts.stream().anyMatch(s -> s.node().equals(machine) && s.sha256().equals(step)),
          machine + " ran the " + STEP + " kubelet on the way: " + starts);
      assertEquals(target, KubeadmCrDoorOnRealCapiIT.sha256(bed.hosts().host(machine).root().resolve("usr/bin/kubelet")),
          machine + " has the " + TO + " kubelet installed");
      assertEquals(TO, bed.workloadClient().nodes().withName(machine).get().getStatus().getNodeInfo().getKubeletVersion(), machine);
    }
    for (GenericKubernetesResource m : estate.machines()) {
      String run = m.getMetadata().getAnnotations().get("upgrade.inplace.dev/update-run");
      assertEquals(WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_COMPLETED, runStatus(run), run);
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
