package dev.inplace.sandbox.chaos;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.activities.capi.CapiResources;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.sandbox.hosts.BinaryStart;
import dev.inplace.sandbox.truth.EstateReport;
import dev.inplace.sandbox.truth.JournalAudit;
import dev.inplace.sandbox.stack.RemoteEstate;
import dev.inplace.workflows.api.ClusterApiActivities;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.temporal.api.enums.v1.WorkflowExecutionStatus;
import io.temporal.api.workflowservice.v1.DescribeWorkflowExecutionResponse;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * The campaign's invariants, checked at the end against ground truth: the workload API server's
 * Nodes (as the estate reports them), the management API server's Machines and control-plane
 * objects, and the Temporal server's record of every run. The product's own report is never read.
 */
final class GroundTruthCheck {
  static final int MAX_HISTORY_EVENTS = 10_000;

  private final RemoteEstate estate;
  private final String from;
  private final String to;
  /** Nodes made to fail (--fail): they must end on {@code from}, schedulable. */
  private final Set<String> failing;
  private final List<String> violations = new ArrayList<>();

  int upgraded;
  int rolledBack;
  int leftCordoned;
  int marksLeft;
  int stuckRuns;
  int duplicateDestructive;
  int wrongDigestStarts;
  long sshDropped;
  long sshHung;
  int maxHistoryEvents;

  GroundTruthCheck(RemoteEstate estate, String from, String to, Set<String> failing) {
    this.estate = estate;
    this.from = from;
    this.to = to;
    this.failing = failing;
  }

  List<String> violations() {
    return List.copyOf(violations);
  }

  void violation(String text) {
    violations.add(text);
  }

  /** Every node at the target (a failing one back on its previous version), Ready and schedulable. */
  void nodes() {
    JsonNode nodes;
    try {
      nodes = new ObjectMapper().readTree(estate.groundTruth());
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
    for (JsonNode node : nodes) {
      String name = node.path("name").asText();
      String version = node.path("kubeletVersion").asText();
      boolean fails = failing.contains(name);
      String expected = fails ? from : to;
      if (version.equals(to) && !fails) {
        upgraded++;
      } else if (fails && version.equals(from)) {
        rolledBack++;
      }
      if (!version.equals(expected)) {
        violation("node " + name + " runs " + version + ", expected " + expected);
      }
      if (node.path("unschedulable").asBoolean()) {
        leftCordoned++;
        violation("node " + name + " left cordoned");
      }
      if (!node.path("ready").asBoolean()) {
        violation("node " + name + " not Ready");
      }
    }
  }

  /**
   * Every Machine records its node's version and carries no skip-remediation mark (the control-plane
   * object's pause is read from the estate report, {@link #report}).
   */
  void capiObjects() {
    KubernetesClient management = estate.management();
    for (Estate.EstateNode node : estate.nodes()) {
      GenericKubernetesResource machine = management.genericKubernetesResources(CapiResources.MACHINE)
          .inNamespace(Estate.NAMESPACE).withName(node.machine()).get();
      if (machine == null) {
        violation("Machine " + node.machine() + " is gone");
        continue;
      }
      String expected = failing.contains(node.name()) ? from : to;
      Object version = machine.getAdditionalProperties().get("spec") instanceof Map<?, ?> spec ? spec.get("version") : null;
      if (!expected.equals(version)) {
        violation("Machine " + node.machine() + " records " + version + ", expected " + expected);
      }
      Map<String, String> annotations = machine.getMetadata().getAnnotations();
      if (marked(annotations, ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION)) {
        marksLeft++;
        violation("Machine " + node.machine() + " left with " + ClusterApiActivities.SKIP_REMEDIATION_ANNOTATION);
      }
    }
  }

  /**
   * Whether an annotation is set. The sandbox's API server keeps a merge patch's {@code null} as a
   * null value where a real one deletes the key; either way the object carries no such mark.
   */
  private static boolean marked(Map<String, String> annotations, String key) {
    return annotations != null && annotations.get(key) != null;
  }

  /**
   * The estate's report: journals audited for repeated destructive actions, binary starts against
   * the catalogue's digests, the SSH fault counters, and the Machines' marks and the control-plane
   * object's pause as the estate reads them.
   */
  void report(EstateReport report, Set<String> catalogueDigests, boolean controlPlaneFails) {
    for (JournalAudit.Violation v : JournalAudit.audit(report.journals())) {
      duplicateDestructive++;
      violation("host " + v.host() + ": " + v.action() + " " + v.target() + " repeated (journal lines " + v.earlier()
          + " and " + v.repeat() + "): " + v.reason());
    }
    for (EstateReport.NodeReport node : report.nodes()) {
      for (BinaryStart start : node.binaryStarts()) {
        if (!catalogueDigests.contains(start.sha256())) {
          wrongDigestStarts++;
          violation("host " + node.name() + " started " + start.binary() + " with sha256 " + start.sha256()
              + " (restart " + start.restart() + "), not a digest of the release catalogue");
        }
      }
    }
    for (EstateReport.ClusterReport cluster : report.clusters()) {
      // Kept paused only with mixed versions (a control plane made to fail), and then only as a run's
      // own pause, which names the run (upgrade.inplace.dev/paused-by): that is the documented reason.
      boolean pausedByARun = cluster.pausedBy() != null && !cluster.pausedBy().isEmpty();
      if (cluster.controlPlanePaused() && !(controlPlaneFails && pausedByARun)) {
        marksLeft++;
        violation(cluster.controlPlaneKind() + " " + cluster.controlPlaneName() + " left paused ("
            + (pausedByARun ? "by " + cluster.pausedBy() : "by no run") + ")");
      }
      if (cluster.clusterPaused()) {
        marksLeft++;
        violation("Cluster " + cluster.namespace() + "/" + cluster.name() + " left paused (spec.paused)");
      }
    }
    if (report.ssh() != null) {
      sshDropped = report.ssh().sshDropped();
      sshHung = report.ssh().sshHung();
    }
  }

  /** Every run closed, none with a history over {@link #MAX_HISTORY_EVENTS} events. */
  void runs(ActivityWatch watch) {
    for (String id : watch.workflowIds()) {
      Optional<DescribeWorkflowExecutionResponse> d = watch.describe(id);
      if (d.isEmpty()) {
        continue; // a node run never started (its node was not upgraded: reported above)
      }
      var info = d.get().getWorkflowExecutionInfo();
      maxHistoryEvents = (int) Math.max(maxHistoryEvents, info.getHistoryLength());
      if (info.getStatus() == WorkflowExecutionStatus.WORKFLOW_EXECUTION_STATUS_RUNNING) {
        stuckRuns++;
        violation("run " + id + " still open");
      }
      if (info.getHistoryLength() > MAX_HISTORY_EVENTS) {
        violation("run " + id + " has " + info.getHistoryLength() + " history events (over " + MAX_HISTORY_EVENTS + ")");
      }
    }
  }
}
