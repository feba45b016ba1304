package dev.inplace.worker.watch;

import dev.inplace.client.RunDescriptions;
import dev.inplace.client.StartOrAttach;
import dev.inplace.worker.crd.RunRecord;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow.ControlPlaneUpgradeRequest;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow.WorkersUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.client.CustomResource;
import io.temporal.api.enums.v1.WorkflowIdReusePolicy;
import io.temporal.client.WorkflowClient;
import io.temporal.client.WorkflowOptions;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts the run(s) of a CR with workflow IDs derived from the CR (namespace, name, uid), and a
 * reuse policy that never allows a second run under an ID: a restarted watcher, a second replica or
 * a repeated event finds the run there and attaches to it ({@link StartOrAttach}).
 */
final class RunStarter {
  private static final Logger log = LoggerFactory.getLogger(RunStarter.class);

  /** Memo keys: which CR a run belongs to, and the spec it was started with. */
  static final String MEMO_RESOURCE = "inplace.dev/resource";

  static final String MEMO_SPEC_HASH = "inplace.dev/spec-hash";
  static final String MEMO_GENERATION = "inplace.dev/generation";
  /** The version the run's nodes ran when it started (status.history's "from"). */
  static final String MEMO_FROM_VERSION = "inplace.dev/from-version";

  private final WorkflowClient client;
  private final String taskQueue;

  RunStarter(WorkflowClient client, String taskQueue) {
    this.client = client;
    this.taskQueue = taskQueue;
  }

  /** The runs a CR has, in order: one for a ControlPlaneUpgrade, one per pool for a WorkersUpgrade. */
  static List<RunRecord> runsOf(CustomResource<?, ?> cr, List<String> pools) {
    String ns = cr.getMetadata().getNamespace();
    String name = cr.getMetadata().getName();
    String uid = cr.getMetadata().getUid();
    if (cr instanceof WorkersUpgrade) {
      List<RunRecord> runs = new ArrayList<>();
      for (String pool : pools) {
        runs.add(new RunRecord(WorkflowIds.workersUpgradeForResource(ns, name, uid, pool), pool));
      }
      return runs;
    }
    return List.of(new RunRecord(WorkflowIds.controlPlaneUpgradeForResource(ns, name, uid), null));
  }

  /** The version a run starts from: the control plane's spec.version, or its MachineDeployment's. */
  static String fromVersion(ResolvedUpgrade resolved, String machineDeployment) {
    if (machineDeployment == null) {
      return resolved.inventory().controlPlaneVersion();
    }
    return resolved.inventory().pools().stream()
        .filter(p -> machineDeployment.equals(p.machineDeployment()))
        .map(p -> p.templateVersion())
        .findFirst()
        .orElse(null);
  }

  /** Starts (or attaches to) every run of the CR; returns how many were started by this call. */
  int start(CustomResource<?, ?> cr, ResolvedUpgrade resolved, String specHash) {
    int started = 0;
    String resource = cr.getKind() + " " + cr.getMetadata().getNamespace() + "/" + cr.getMetadata().getName();
    Map<String, Object> memo = new LinkedHashMap<>();
    memo.put(MEMO_RESOURCE, resource);
    memo.put(MEMO_SPEC_HASH, specHash);
    memo.put(MEMO_GENERATION, cr.getMetadata().getGeneration());
    for (RunRecord run : runsOf(cr, resolved.pools())) {
      Map<String, Object> runMemo = new LinkedHashMap<>(memo);
      String from = fromVersion(resolved, run.getMachineDeployment());
      if (from != null) {
        runMemo.put(MEMO_FROM_VERSION, from);
      }
      boolean isNew;
      if (run.getMachineDeployment() == null) {
        ControlPlaneUpgradeRequest request =
            new ControlPlaneUpgradeRequest(resolved.cluster(), resolved.template(), resolved.soakSeconds(), resolved.window());
        WorkflowOptions options = options(run.getWorkflowId(), RunSearchAttributes.KIND_CONTROL_PLANE, resolved, runMemo,
            RunDescriptions.controlPlane(request, resource));
        isNew = StartOrAttach.start(client, ControlPlaneUpgradeWorkflow.class, options,
            stub -> WorkflowClient.start(stub::upgrade, request));
      } else {
        WorkersUpgradeRequest request =
            new WorkersUpgradeRequest(
                resolved.cluster(),
                run.getMachineDeployment(),
                resolved.template(),
                resolved.maxUnavailable(),
                resolved.failurePolicy(),
                resolved.maxFailures(),
                resolved.soakSeconds(),
                resolved.window(),
                null);
        WorkflowOptions options = options(run.getWorkflowId(), RunSearchAttributes.KIND_WORKERS, resolved, runMemo,
            RunDescriptions.workers(request, resource));
        isNew = StartOrAttach.start(client, WorkersUpgradeWorkflow.class, options,
            stub -> WorkflowClient.start(stub::upgrade, request));
      }
      if (isNew) {
        started++;
        log.info("started {} for {}", run.getWorkflowId(), resource);
      } else {
        log.info("{} already exists for {}: attached", run.getWorkflowId(), resource);
      }
    }
    return started;
  }

  private WorkflowOptions options(
      String id, String kind, ResolvedUpgrade resolved, Map<String, Object> memo, RunDescriptions.Description description) {
    io.temporal.common.SearchAttributes attributes =
        io.temporal.common.SearchAttributes.newBuilder()
            .set(RunSearchAttributes.KIND, kind)
            .set(RunSearchAttributes.CLUSTER, resolved.cluster().toString())
            .set(RunSearchAttributes.TARGET_VERSION, resolved.template().targetVersion())
            .build();
    return WorkflowOptions.newBuilder()
        .setWorkflowId(id)
        .setTaskQueue(taskQueue)
        // One run per CR, ever: not even after a failure (a new attempt is a new CR).
        .setWorkflowIdReusePolicy(WorkflowIdReusePolicy.WORKFLOW_ID_REUSE_POLICY_REJECT_DUPLICATE)
        .setTypedSearchAttributes(attributes)
        .setMemo(memo)
        .setStaticSummary(description.summary())
        .setStaticDetails(description.details())
        .build();
  }
}
