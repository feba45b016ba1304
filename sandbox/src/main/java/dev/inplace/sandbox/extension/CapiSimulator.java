package dev.inplace.sandbox.extension;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A small stand-in for CAPI v1.12's in-place update flow (reference/capi-contracts.md s.1.3-1.4),
 * driving the extension over HTTPS the way the controllers do. One class per controller, composed
 * here:
 *
 * <ul>
 *   <li>{@link ControlPlaneController}: the KCP-like rollout, CanUpdateMachine per Machine;
 *   <li>{@link MachineDeploymentController}: the MachineDeployment and MachineSet controllers,
 *       CanUpdateMachineSet and the move of the Machines to the new MachineSet;
 *   <li>{@link MachineController}: UpdateMachine polled until done, then the markers removed;
 *   <li>{@link InPlaceHandshake}: what the owners share ("patched current == desired", the desired
 *       specs and markers); {@link ProviderObjects}: the providers' objects the estate lacks.
 * </ul>
 */
final class CapiSimulator {
  private final ProviderObjects providers;
  private final ControlPlaneController controlPlane;
  private final MachineDeploymentController machineDeployments;

  CapiSimulator(KubernetesClient management, KubernetesClient workload, HookClient hooks, Consumer<String> say,
      Map<String, String> settings, String namespace, boolean kubeadm) {
    CapiObjects objects = new CapiObjects(management, namespace, kubeadm);
    InPlaceHandshake handshake = new InPlaceHandshake(objects, say);
    MachineController machines = new MachineController(objects, workload, hooks, settings, say);
    this.providers = new ProviderObjects(objects);
    this.controlPlane = new ControlPlaneController(objects, hooks, settings, say, handshake, machines);
    this.machineDeployments = new MachineDeploymentController(objects, hooks, settings, say, handshake, machines);
  }

  /** Creates each Machine's bootstrap config and Metal3Machine, and each pool's templates, as providers would. */
  void seed(List<String> machines, List<String> pools, String version) {
    providers.seed(machines, pools, version);
  }

  /** A KCP-like rollout with maxSurge 0: each Machine not at {@code version}, one at a time. */
  Map<String, UpdateOutcome> upgradeControlPlane(ResourceDefinitionContext type, String name, String version) {
    return controlPlane.upgrade(type, name, version);
  }

  /** A version bump of a MachineDeployment whose Machines all belong to {@code oldMachineSet}. */
  Map<String, UpdateOutcome> upgradeMachineDeployment(String md, String oldMachineSet, String version, int maxUnavailable) {
    return machineDeployments.upgrade(md, oldMachineSet, version, maxUnavailable);
  }
}
