package dev.inplace.sandbox.demo;

import dev.inplace.activities.capi.CapiResources;
import dev.inplace.sandbox.estate.Estate;
import dev.inplace.starter.NodeUpgradeRuns;
import dev.inplace.starter.ReleaseCatalogue;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeFailure;
import dev.inplace.workflows.api.NodeProgress;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeTarget;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeResult;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.StepRecord;
import dev.inplace.workflows.api.StepStatus;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowFailedException;
import io.temporal.client.WorkflowStub;
import io.temporal.failure.ApplicationFailure;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Drives the demo against a running estate and worker: resolves the target release from the
 * catalogue, reads the cluster's Machines, and upgrades the control planes, then the workers, one
 * NodeUpgrade run at a time, printing each step as it happens.
 */
public final class DemoRun {

  private final Estate estate;
  private final WorkflowClient client;
  private final String taskQueue;
  private final DemoOptions options;
  private final PrintStream out;
  private final long startNanos = System.nanoTime();

  public DemoRun(Estate estate, WorkflowClient client, String taskQueue, DemoOptions options, PrintStream out) {
    this.estate = estate;
    this.client = client;
    this.taskQueue = taskQueue;
    this.options = options;
    this.out = out;
  }

  public DemoSummary run() {
    ReleaseCatalogue.Release release =
        ReleaseCatalogue.read(estate.catalogue()).find(options.to(), Distribution.K3S, "amd64");
    List<NodeTarget> targets = machines();
    long cps = targets.stream().filter(t -> t.role() == NodeRole.CONTROL_PLANE).count();
    out.printf("inplace demo: upgrading cluster %s (%d control plane%s, %d worker%s) from %s to %s%n",
        estate.cluster(), cps, cps == 1 ? "" : "s", targets.size() - cps, targets.size() - cps == 1 ? "" : "s",
        options.from(), options.to());
    List<NodeOutcome> outcomes = new ArrayList<>();
    boolean controlPlaneFailed = false;
    for (NodeTarget target : targets) {
      if (controlPlaneFailed && target.role() == NodeRole.WORKER) {
        // A kubelet must never be newer than the apiserver: workers wait for every control plane.
        outcomes.add(new NodeOutcome(target.nodeName(), target.machineName(), NodeOutcome.NOT_STARTED,
            options.from(), "", "", "a control plane did not reach " + options.to()));
        continue;
      }
      NodeOutcome outcome = upgrade(target, release);
      outcomes.add(outcome);
      if (!outcome.upgraded() && target.role() == NodeRole.CONTROL_PLANE) {
        controlPlaneFailed = true;
      }
    }
    double wall = (System.nanoTime() - startNanos) / 1e9;
    DemoSummary summary = new DemoSummary(
        outcomes.size(),
        outcomes.stream().filter(NodeOutcome::upgraded).count(),
        outcomes.stream().filter(NodeOutcome::failed).count(),
        outcomes.stream().filter(o -> NodeOutcome.ROLLED_BACK.equals(o.result())).count(),
        outcomes.stream().filter(o -> NodeOutcome.NOT_STARTED.equals(o.result())).count(),
        options.to(),
        Math.round(wall * 10) / 10.0,
        List.copyOf(outcomes));
    printSummary(summary);
    return summary;
  }

  /** The cluster's Machines, control planes first, each resolved to its Node and address. */
  private List<NodeTarget> machines() {
    List<NodeTarget> targets = new ArrayList<>();
    for (GenericKubernetesResource m :
        estate.management().genericKubernetesResources(CapiResources.MACHINE).inNamespace(Estate.NAMESPACE)
            .withLabel("cluster.x-k8s.io/cluster-name", Estate.CLUSTER).list().getItems()) {
      Map<String, Object> status = map(m.getAdditionalProperties().get("status"));
      String node = String.valueOf(map(status.get("nodeRef")).get("name"));
      String address = ((List<?>) status.getOrDefault("addresses", List.of())).stream()
          .map(DemoRun::map)
          .filter(a -> "InternalIP".equals(a.get("type")))
          .map(a -> String.valueOf(a.get("address")))
          .findFirst()
          .orElseThrow(() -> new IllegalStateException("Machine " + m.getMetadata().getName() + " has no InternalIP"));
      NodeRole role = m.getMetadata().getLabels().containsKey("cluster.x-k8s.io/control-plane")
          ? NodeRole.CONTROL_PLANE : NodeRole.WORKER;
      targets.add(new NodeTarget(estate.cluster(), m.getMetadata().getName(), node, role, address));
    }
    targets.sort(Comparator.comparing(NodeTarget::role).thenComparing(NodeTarget::nodeName, DemoRun::naturalOrder));
    return targets;
  }

  private NodeOutcome upgrade(NodeTarget target, ReleaseCatalogue.Release release) {
    NodeUpgradeRequest request = new NodeUpgradeRequest(
        target, Distribution.K3S, options.to(), release.artifacts(), HostProfile.k3sDefaults(), estate.ssh(),
        new DrainOptions(options.drainTimeoutSeconds(), true, false, PdbBlockedAction.FAIL, false),
        60, 0, release.arch());
    WorkflowStub stub = NodeUpgradeRuns.startOrAttach(client, taskQueue, request);
    CompletableFuture<NodeUpgradeResult> result = stub.getResultAsync(NodeUpgradeResult.class);
    Set<String> printed = new HashSet<>();
    while (!result.isDone()) {
      printNew(target.nodeName(), query(stub), printed);
      try {
        result.get(200, TimeUnit.MILLISECONDS);
      } catch (Exception e) {
        // still running, or failed: both handled below
      }
    }
    try {
      NodeUpgradeResult done = result.join();
      printSteps(target.nodeName(), done.steps(), printed);
      return new NodeOutcome(target.nodeName(), target.machineName(), NodeOutcome.UPGRADED, done.version(), "", "", "");
    } catch (Exception e) {
      Throwable cause = e.getCause() instanceof WorkflowFailedException wfe ? wfe.getCause() : e.getCause();
      if (cause instanceof ApplicationFailure app && app.getDetails().getSize() > 0) {
        NodeFailure failure = app.getDetails().get(NodeFailure.class);
        printSteps(target.nodeName(), failure.steps(), printed);
        String outcome = switch (failure.phase()) {
          case ROLLED_BACK -> NodeOutcome.ROLLED_BACK;
          case ROLLBACK_FAILED -> NodeOutcome.ROLLBACK_FAILED;
          default -> NodeOutcome.FAILED;
        };
        return new NodeOutcome(target.nodeName(), target.machineName(), outcome,
            failure.versionNow() == null ? "" : failure.versionNow(), failure.failedStep().cliName(),
            failure.reason(), failure.message());
      }
      String text = cause == null ? e.toString() : cause.getMessage();
      return new NodeOutcome(target.nodeName(), target.machineName(), NodeOutcome.FAILED, "", "", "Unknown", text);
    }
  }

  private NodeProgress query(WorkflowStub stub) {
    try {
      return stub.query("progress", NodeProgress.class);
    } catch (RuntimeException e) {
      return null; // not started yet, or just finished
    }
  }

  private void printNew(String node, NodeProgress progress, Set<String> printed) {
    if (progress != null) {
      printSteps(node, progress.steps(), printed);
    }
  }

  private void printSteps(String node, List<StepRecord> steps, Set<String> printed) {
    for (int i = 0; i < steps.size(); i++) {
      StepRecord s = steps.get(i);
      if (s.status() == StepStatus.RUNNING) {
        continue;
      }
      if (printed.add(i + ":" + s.step())) {
        double at = (System.nanoTime() - startNanos) / 1e9;
        out.printf("[%6.1fs] %-10s %-9s %-7s %s%n", at, node, s.step().cliName(),
            s.status() == StepStatus.FAILED ? "FAILED" : s.status().name().toLowerCase(), s.message());
      }
    }
  }

  private void printSummary(DemoSummary summary) {
    out.println();
    out.printf("%-10s %-16s %-15s %s%n", "NODE", "RESULT", "VERSION", "REASON");
    for (NodeOutcome o : summary.results()) {
      out.printf("%-10s %-16s %-15s %s%n", o.node(), o.result(), o.version(),
          o.reason().isEmpty() ? "" : o.reason() + " at " + o.failedStep() + ": " + o.message());
    }
    out.printf("%d nodes: %d upgraded, %d failed (%d rolled back), %d not started, in %.1fs%n",
        summary.nodes(), summary.upgraded(), summary.failed(), summary.rolledBack(), summary.notStarted(),
        summary.wallSeconds());
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object o) {
    return o instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  /** Orders cp-2 before cp-10. */
  private static int naturalOrder(String a, String b) {
    String pa = a.replaceAll("\\d+$", "");
    String pb = b.replaceAll("\\d+$", "");
    if (!pa.equals(pb) || !a.matches(".*\\d+$") || !b.matches(".*\\d+$")) {
      return a.compareTo(b);
    }
    return Integer.compare(Integer.parseInt(a.substring(pa.length())), Integer.parseInt(b.substring(pb.length())));
  }
}
