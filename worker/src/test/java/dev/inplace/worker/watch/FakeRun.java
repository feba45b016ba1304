package dev.inplace.worker.watch;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.UpgradeControls;
import dev.inplace.workflows.api.UpgradeProgress;
import dev.inplace.workflows.api.UpgradeProgress.RunPhase;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.common.converter.EncodedValues;
import io.temporal.failure.CanceledFailure;
import io.temporal.workflow.DynamicQueryHandler;
import io.temporal.workflow.DynamicSignalHandler;
import io.temporal.workflow.Workflow;
import java.util.ArrayList;
import java.util.List;

/**
 * A stand-in for the parent workflows, with their controls and progress query, that upgrades its
 * nodes one at a time as the test says: signal {@code finish} completes the node in flight, signal
 * {@code fail} fails it (rolled back, the run halts until aborted). Pause, resume and abort behave as
 * in the real runs (the node in flight finishes); a cancellation rolls the node in flight back. A
 * dynamic query {@code request} returns the input the run was started with.
 */
abstract class FakeRun implements UpgradeControls {
  static final String FINISH = "finish";
  static final String FAIL = "fail";
  static final String REQUEST = "request";

  private final String kind;
  private final List<NodeStatus> nodes = new ArrayList<>();
  private ClusterRef cluster;
  private String target;
  private boolean paused;
  private boolean aborting;
  private boolean halted;
  private boolean finished;
  private int finishes;
  private int fails;
  private RunPhase end;
  private String snapshot;

  FakeRun(String kind) {
    this.kind = kind;
  }

  /** Runs the nodes; returns whether it was aborted. */
  protected final boolean run(ClusterRef cluster, String target, List<String> nodeNames, NodeRole role, Object request, boolean snapshotFirst) {
    this.cluster = cluster;
    this.target = target;
    Workflow.registerListener(
        (DynamicSignalHandler)
            (String name, EncodedValues args) -> {
              if (FINISH.equals(name)) {
                finishes++;
              } else if (FAIL.equals(name)) {
                fails++;
              }
            });
    Workflow.registerListener((DynamicQueryHandler) (String name, EncodedValues args) -> request);
    for (String n : nodeNames) {
      nodes.add(new NodeStatus(cluster.name() + "-" + n, n, role, NodePhase.PENDING, null, 0, 0, null, null, null));
    }
    if (snapshotFirst) {
      snapshot = "inplace-pre-" + target.replaceAll("[^a-z0-9-]", "-");
    }
    int current = -1;
    try {
      for (int i = 0; i < nodes.size(); i++) {
        Workflow.await(() -> aborting || !paused);
        if (aborting) {
          break;
        }
        current = i;
        set(i, NodePhase.UPGRADING, null, Workflow.currentTimeMillis(), 0, null, "upgrading",
            "node-upgrade/" + cluster.namespace() + "/" + nodes.get(i).machine() + "/" + target);
        Workflow.await(() -> finishes > 0 || fails > 0);
        if (fails > 0) {
          fails--;
          set(i, NodePhase.ROLLED_BACK, UpgradeStep.RESTART, nodes.get(i).startedMillis(), Workflow.currentTimeMillis(),
              UpgradeFailures.SERVICE_RESTART_FAILED, "k3s did not become active; previous binaries restored",
              nodes.get(i).workflowId());
          current = -1;
          halted = true;
          Workflow.await(() -> aborting);
          break;
        }
        finishes--;
        set(i, NodePhase.UPGRADED, null, nodes.get(i).startedMillis(), Workflow.currentTimeMillis(), null,
            "upgraded to " + target, nodes.get(i).workflowId());
        current = -1;
      }
      end = aborting ? RunPhase.ABORTED : halted ? RunPhase.FAILED : RunPhase.SUCCEEDED;
      finished = true;
      return aborting;
    } catch (CanceledFailure e) {
      int inFlight = current;
      Workflow.newDetachedCancellationScope(
              () -> {
                if (inFlight >= 0) {
                  set(inFlight, NodePhase.ROLLED_BACK, null, nodes.get(inFlight).startedMillis(),
                      Workflow.currentTimeMillis(), UpgradeFailures.CANCELLED, "cancelled; previous binaries restored",
                      nodes.get(inFlight).workflowId());
                }
                end = RunPhase.ABORTED;
                finished = true;
              })
          .run();
      throw e;
    }
  }

  private void set(int i, NodePhase phase, UpgradeStep step, long started, long finished, String reason, String message,
      String workflowId) {
    NodeStatus n = nodes.get(i);
    nodes.set(i, new NodeStatus(n.machine(), n.node(), n.role(), phase, step, started, finished, reason, message, workflowId));
  }

  protected final ClusterRef cluster() {
    return cluster;
  }

  protected final String target() {
    return target;
  }

  protected final String snapshot() {
    return snapshot;
  }

  protected final List<NodeStatus> nodes() {
    return List.copyOf(nodes);
  }

  protected final int count(NodePhase phase) {
    return (int) nodes.stream().filter(n -> n.phase() == phase).count();
  }

  private RunPhase phase() {
    if (finished) {
      return end;
    }
    if (aborting) {
      return RunPhase.ABORTING;
    }
    if (halted) {
      return RunPhase.HALTED;
    }
    return paused ? RunPhase.PAUSED : RunPhase.UPGRADING;
  }

  /** These fake runs have no children to hear from. */
  public void nodeStaged(String node) {}

  @Override
  public UpgradeProgress progress() {
    return new UpgradeProgress(
        kind, cluster, target, phase(), phase() + ": " + count(NodePhase.UPGRADED) + "/" + nodes.size() + " upgraded",
        paused, "1", 1, nodes.size(), count(NodePhase.UPGRADED), count(NodePhase.ROLLED_BACK), count(NodePhase.SKIPPED),
        count(NodePhase.UPGRADING), snapshot, nodes());
  }

  @Override
  public String pause() {
    paused = true;
    return "paused";
  }

  @Override
  public void validatePause() {
    running();
    if (paused) {
      throw new IllegalStateException("already paused");
    }
  }

  @Override
  public String resume() {
    paused = false;
    return "resumed";
  }

  @Override
  public void validateResume() {
    running();
    if (!paused) {
      throw new IllegalStateException("not paused");
    }
  }

  @Override
  public String abort() {
    aborting = true;
    return "aborting";
  }

  @Override
  public void validateAbort() {
    if (finished || aborting) {
      throw new IllegalStateException(finished ? "finished" : "already aborting");
    }
  }

  @Override
  public String setMaxUnavailable(String maxUnavailable) {
    throw new IllegalStateException("not in the fake");
  }

  @Override
  public void validateSetMaxUnavailable(String maxUnavailable) {
    throw new IllegalStateException("not in the fake");
  }

  @Override
  public String retryNode(String node) {
    throw new IllegalStateException("not in the fake");
  }

  @Override
  public void validateRetryNode(String node) {
    throw new IllegalStateException("not in the fake");
  }

  @Override
  public String skipNode(String node) {
    throw new IllegalStateException("not in the fake");
  }

  @Override
  public void validateSkipNode(String node) {
    throw new IllegalStateException("not in the fake");
  }

  private void running() {
    if (finished || aborting) {
      throw new IllegalStateException("the run has ended or is aborting");
    }
  }
}
