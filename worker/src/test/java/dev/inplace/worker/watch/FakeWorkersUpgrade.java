package dev.inplace.worker.watch;

import dev.inplace.workflows.api.NodeEnd;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.WorkersUpgradeWorkflow;
import java.util.List;

/** WorkersUpgrade stand-in: the pool's nodes are {@code <md>-0} and {@code <md>-1}. */
public class FakeWorkersUpgrade extends FakeRun implements WorkersUpgradeWorkflow {

  public FakeWorkersUpgrade() {
    super(RunSearchAttributes.KIND_WORKERS);
  }

  static List<String> nodes(String machineDeployment) {
    return List.of(machineDeployment + "-0", machineDeployment + "-1");
  }

  @Override
  public WorkersUpgradeResult upgrade(WorkersUpgradeRequest request) {
    boolean aborted =
        run(request.cluster(), request.template().targetVersion(), nodes(request.machineDeployment()), NodeRole.WORKER,
            request, false);
    return new WorkersUpgradeResult(
        cluster(), request.machineDeployment(), target(), count(NodePhase.UPGRADED), count(NodePhase.ROLLED_BACK), 0,
        aborted, 1, nodes());
  }

  /** Its nodes are not children: nothing reports to it. */
  @Override
  public void nodeEnded(NodeEnd end) {}
}
