package dev.inplace.sandbox.extension;

import static dev.inplace.sandbox.extension.CapiObjects.JSON;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * A KCP-like control-plane controller with maxSurge 0: for each Machine not at the control plane's
 * version, CanUpdateMachine; the answer checked; then the desired specs and markers written and the
 * Machine handed to the Machine controller, one Machine at a time.
 */
final class ControlPlaneController {
  private final CapiObjects objects;
  private final HookClient hooks;
  private final Map<String, String> settings;
  private final Consumer<String> say;
  private final InPlaceHandshake handshake;
  private final MachineController machines;

  ControlPlaneController(CapiObjects objects, HookClient hooks, Map<String, String> settings, Consumer<String> say,
      InPlaceHandshake handshake, MachineController machines) {
    this.objects = objects;
    this.hooks = hooks;
    this.settings = settings;
    this.say = say;
    this.handshake = handshake;
    this.machines = machines;
  }

  /** A KCP-like rollout with maxSurge 0: each Machine not at {@code version}, one at a time. */
  Map<String, UpdateOutcome> upgrade(ResourceDefinitionContext type, String name, String version) {
    objects.management.genericKubernetesResources(type).inNamespace(objects.namespace).withName(name)
        .edit(cp -> { CapiObjects.spec(cp).put("version", version); return cp; });
    say.accept(type.getKind() + " " + name + ": spec.version -> " + version);
    List<String> controlPlaneMachines = objects.machines(CapiResources.CONTROL_PLANE_LABEL, null);
    Map<String, UpdateOutcome> outcomes = new LinkedHashMap<>();
    for (String machine : controlPlaneMachines) {
      if (!outcomes.values().stream().allMatch(UpdateOutcome::done)) {
        outcomes.put(machine, new UpdateOutcome(machine, objects.nodeOf(machine), false, false,
            "not started: an earlier control-plane Machine did not finish"));
        continue;
      }
      machines.runWindow(List.of(machine), 1, m -> start(m, version), outcomes);
    }
    return outcomes;
  }

  private MachineController.Update start(String name, String version) {
    GenericKubernetesResource machine = objects.get(CapiResources.MACHINE, name);
    if (version.equals(CapiObjects.spec(machine).get("version"))) {
      return MachineController.Update.finished(new UpdateOutcome(name, objects.nodeOf(name), true, false, "already at " + version));
    }
    ObjectNode current = JSON.createObjectNode();
    current.set("machine", CapiObjects.strip(machine));
    current.set("infrastructureMachine", CapiObjects.strip(objects.get(CapiObjects.METAL3_MACHINE, CapiObjects.infraOf(machine))));
    current.set("bootstrapConfig", CapiObjects.strip(objects.get(objects.bootstrapConfig, CapiObjects.bootstrapOf(machine))));
    ObjectNode desired = current.deepCopy();
    ((ObjectNode) desired.at("/machine/spec")).put("version", version);
    if (objects.kubeadm) {
      ObjectNode bootstrapSpec = (ObjectNode) desired.at("/bootstrapConfig/spec");
      JsonNode cluster = bootstrapSpec.get("clusterConfiguration");
      (cluster instanceof ObjectNode o ? o : bootstrapSpec.putObject("clusterConfiguration")).put("kubernetesVersion", version);
    } else {
      ((ObjectNode) desired.at("/bootstrapConfig/spec")).put("version", version);
    }
    ObjectNode request = JSON.createObjectNode();
    request.set("settings", JSON.valueToTree(settings));
    request.set("current", current);
    request.set("desired", desired);
    JsonNode answer = hooks.call("CanUpdateMachine", request);
    String refusal = handshake.check("CanUpdateMachine " + name, answer, current, desired, "/spec",
        List.of("machine", "infrastructureMachine", "bootstrapConfig"),
        List.of("machinePatch", "infrastructureMachinePatch", "bootstrapConfigPatch"));
    if (refusal != null) {
      return MachineController.Update.finished(new UpdateOutcome(name, objects.nodeOf(name), false, false, refusal));
    }
    handshake.writeDesired(machine, desired.at("/machine/spec"), desired.at("/bootstrapConfig/spec"));
    return new MachineController.Update(name);
  }
}
