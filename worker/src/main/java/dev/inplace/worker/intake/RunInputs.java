package dev.inplace.worker.intake;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import java.util.List;

/**
 * A run's inputs, checked by {@link RunIntake#admit}: what a parent run gives each NodeUpgrade child
 * ({@code template}), its maintenance window, and the Machines it covers, each already a valid node
 * target.
 *
 * @param window when nodes may start; null means any time
 */
public record RunInputs(
    ClusterRef cluster, NodeUpgradeTemplate template, MaintenanceWindow window, List<MachineInfo> machines) {
  public RunInputs {
    machines = List.copyOf(machines);
  }

  /** The NodeUpgrade request for one of the run's Machines (as a parent run builds its children's). */
  public NodeUpgradeRequest request(MachineInfo machine) {
    return template.forNode(machine.target(cluster));
  }
}
