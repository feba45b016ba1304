package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import io.temporal.api.enums.v1.IndexedValueType;
import io.temporal.client.WorkflowExecutionDescription;
import io.temporal.client.WorkflowStub;
import io.temporal.testing.TestWorkflowEnvironment;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** The parent runs the CLI starts carry a static summary and details, read back from the server (DescribeWorkflowExecution). */
class RunDescriptionsTest {
  static final ClusterRef CLUSTER = new ClusterRef("fleet", "edge-1");
  static final String TO = "v1.31.2+k3s1";

  private TestWorkflowEnvironment env;

  @BeforeEach
  void start() {
    env = TestWorkflowEnvironment.newInstance();
    SearchAttributeRegistration.wanted().forEach((name, type) -> env.registerSearchAttribute(name, type));
    env.start();
  }

  @AfterEach
  void stop() {
    env.close();
  }

  static NodeUpgradeTemplate template(DrainOptions drain) {
    Artifact k3s = new Artifact("k3s", ArtifactKind.BINARY, "/srv/k3s", "ab".repeat(32), 16L << 20, "/usr/local/bin/k3s", "0755");
    return new NodeUpgradeTemplate(Distribution.K3S, TO, List.of(k3s), Distribution.K3S.defaultProfile(),
        new SshSettings("inplace", 22, "edge-1-ssh-key", "edge-1-known-hosts", null), drain, 300, 0, "amd64");
  }

  private WorkflowExecutionDescription describe(String id) {
    return env.getWorkflowClient().newUntypedWorkflowStub(id).describe();
  }

  @Test
  void aControlPlaneRunStartedByTheCliHasASummaryAndDetailsOnTheServer() {
    UpgradeRuns.startControlPlane(env.getWorkflowClient(), "q",
        new ControlPlaneUpgradeRequest(CLUSTER, template(DrainOptions.defaults()), 60,
            new MaintenanceWindow(List.of("SAT"), "01:00", "05:00", "UTC")));

    WorkflowExecutionDescription d = describe(WorkflowIds.controlPlaneUpgrade("fleet", "edge-1", TO));

    assertEquals("Upgrade the control plane of fleet/edge-1 to " + TO, d.getStaticSummary());
    String details = d.getStaticDetails();
    assertTrue(details.startsWith("**ControlPlaneUpgrade** of cluster `fleet/edge-1` to `" + TO + "`"), details);
    assertTrue(details.contains("- distribution: k3s, amd64"), details);
    assertTrue(details.contains("- artifacts: k3s 16 MiB"), details);
    assertTrue(details.contains("- soak: 60 s; maintenance window: SAT 01:00-05:00 UTC"), details);
    assertFalse(details.contains("edge-1-ssh-key"), "no Secret names or keys in the details: " + details);
  }

  @Test
  void aWorkersRunStartedByTheCliHasASummaryAndDetailsOnTheServer() {
    UpgradeRuns.startWorkers(env.getWorkflowClient(), "q",
        new WorkersUpgradeRequest(CLUSTER, "md-a", template(new DrainOptions(300, true, false, null, true)), "25%",
            FailurePolicy.HALT, 0, 0, null, null));

    WorkflowExecutionDescription d = describe(WorkflowIds.workersUpgrade("fleet", "edge-1", "md-a", TO));

    assertEquals("Upgrade workers of md-a in fleet/edge-1 to " + TO, d.getStaticSummary());
    assertTrue(d.getStaticDetails().contains("- window: maxUnavailable 25%; on failure HALT"), d.getStaticDetails());
    assertTrue(d.getStaticDetails().contains("- drain: skipped (cordon only)"), d.getStaticDetails());
    assertTrue(d.getStaticDetails().contains("maintenance window: none"), d.getStaticDetails());
  }
}
