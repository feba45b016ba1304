package dev.inplace.worker.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeTarget;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.SshSettings;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.testing.TestWorkflowEnvironment;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A NodeUpgrade the CAPI hook starts carries a static summary and details, read back from the server. */
class TemporalNodeRunsTest {
  private TestWorkflowEnvironment env;

  @BeforeEach
  void start() {
    env = TestWorkflowEnvironment.newInstance();
    env.start();
  }

  @AfterEach
  void stop() {
    env.close();
  }

  @Test
  void aNodeRunStartedByTheHookHasASummaryAndDetailsOnTheServer() {
    Artifact k3s = new Artifact("k3s", ArtifactKind.BINARY, "/srv/k3s", "ab".repeat(32), 16L << 20, "/usr/local/bin/k3s", "0755");
    NodeUpgradeRequest request = new NodeUpgradeRequest(
        new NodeTarget(new ClusterRef("fleet", "edge-1"), "edge-1-md-a-x", "worker-a-1", NodeRole.WORKER, "10.0.0.7"),
        Distribution.K3S, "v1.31.2+k3s1", List.of(k3s), Distribution.K3S.defaultProfile(),
        new SshSettings("inplace", 22, "edge-1-ssh-key", "edge-1-known-hosts", null), DrainOptions.defaults(), 300, 0,
        "amd64", false, true);
    try (TemporalNodeRuns runs = new TemporalNodeRuns(env.getWorkflowClient(), "q")) {
      assertTrue(runs.start("node-upgrade/fleet/edge-1/worker-a-1/v1.31.2+k3s1", request));
    }

    WorkflowExecutionDescription d =
        env.getWorkflowClient().newUntypedWorkflowStub("node-upgrade/fleet/edge-1/worker-a-1/v1.31.2+k3s1").describe();

    assertEquals("Upgrade worker-a-1 (edge-1-md-a-x) to v1.31.2+k3s1 (CAPI UpdateMachine hook)", d.getStaticSummary());
    String details = d.getStaticDetails();
    assertTrue(details.startsWith("**NodeUpgrade** of node `worker-a-1` (Machine `edge-1-md-a-x`, WORKER) in cluster `fleet/edge-1`"),
        details);
    assertTrue(details.contains("- host: 10.0.0.7 (k3s, amd64)"), details);
    assertTrue(details.contains("- artifacts: k3s 16 MiB"), details);
    assertTrue(details.contains("- drain: timeout 300 s, PDB blocked: FAIL"), details);
    assertTrue(details.contains("- started by: CAPI UpdateMachine hook"), details);
  }
}
