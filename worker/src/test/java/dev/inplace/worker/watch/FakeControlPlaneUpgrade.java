package dev.inplace.worker.watch;

import dev.inplace.workflows.api.ControlPlaneUpgradeWorkflow;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.RunSearchAttributes;
import java.util.List;

/** ControlPlaneUpgrade stand-in: control-plane nodes {@code cp-0}, {@code cp-1}. */
public class FakeControlPlaneUpgrade extends FakeRun implements ControlPlaneUpgradeWorkflow {
  static final List<String> NODES = List.of("cp-0", "cp-1");

  public FakeControlPlaneUpgrade() {
    super(RunSearchAttributes.KIND_CONTROL_PLANE);
  }

  @Override
  public ControlPlaneUpgradeResult upgrade(ControlPlaneUpgradeRequest request) {
    boolean aborted = run(request.cluster(), request.template().targetVersion(), NODES, NodeRole.CONTROL_PLANE, request, true);
    return new ControlPlaneUpgradeResult(
        cluster(), target(), snapshot(), count(NodePhase.UPGRADED), count(NodePhase.ROLLED_BACK), 0, aborted, nodes());
  }
}
