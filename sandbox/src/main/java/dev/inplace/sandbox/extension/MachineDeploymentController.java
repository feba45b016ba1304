package dev.inplace.sandbox.extension;

import static dev.inplace.sandbox.extension.CapiObjects.JSON;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Consumer;

/**
 * The MachineDeployment and MachineSet controllers: a new MachineSet for the new template,
 * CanUpdateMachineSet (the same check on {@code spec.template.spec}), the move annotations, then the
 * Machines moved over and handed to the Machine controller {@code maxUnavailable} at a time.
 */
final class MachineDeploymentController {
  private final CapiObjects objects;
  private final HookClient hooks;
  private final Map<String, String> settings;
  private final Consumer<String> say;
  private final InPlaceHandshake handshake;
  private final MachineController machines;

  MachineDeploymentController(CapiObjects objects, HookClient hooks, Map<String, String> settings, Consumer<String> say,
      InPlaceHandshake handshake, MachineController machines) {
    this.objects = objects;
    this.hooks = hooks;
    this.settings = settings;
    this.say = say;
    this.handshake = handshake;
    this.machines = machines;
  }

  /** A version bump of a MachineDeployment whose Machines all belong to {@code oldMachineSet}. */
  Map<String, UpdateOutcome> upgrade(String md, String oldMachineSet, String version, int maxUnavailable) {
    String namespace = objects.namespace;
    objects.management.genericKubernetesResources(CapiResources.MACHINE_DEPLOYMENT).inNamespace(namespace).withName(md)
        .edit(d -> {
          CapiObjects.map(CapiObjects.map(CapiObjects.spec(d).get("template")).get("spec")).put("version", version);
          return d;
        });
    say.accept("MachineDeployment " + md + ": spec.template.spec.version -> " + version);
    GenericKubernetesResource deployment = objects.get(CapiResources.MACHINE_DEPLOYMENT, md);
    GenericKubernetesResource oldSet = objects.get(CapiResources.MACHINE_SET, oldMachineSet);
    Object template = CapiObjects.spec(deployment).get("template");
    String newMachineSet = md + "-" + hash(template);
    GenericKubernetesResource newSet = new GenericKubernetesResourceBuilder()
        .withApiVersion(oldSet.getApiVersion()).withKind("MachineSet")
        .withNewMetadata().withName(newMachineSet).withNamespace(namespace).withLabels(CapiObjects.labels(oldSet))
        .withAnnotations(Map.of("machinedeployment.clusters.x-k8s.io/revision", "2")).endMetadata().build();
    Map<String, Object> newSpec = new LinkedHashMap<>(CapiObjects.spec(oldSet));
    newSpec.put("replicas", 0);
    newSpec.put("template", template);
    newSet.setAdditionalProperty("spec", newSpec);
    objects.management.genericKubernetesResources(CapiResources.MACHINE_SET).inNamespace(namespace).resource(newSet).create();
    say.accept("MachineSet " + newMachineSet + " created for the new template");

    ObjectNode current = JSON.createObjectNode();
    current.set("machineSet", CapiObjects.strip(oldSet));
    current.set("infrastructureMachineTemplate", CapiObjects.strip(objects.get(CapiObjects.METAL3_MACHINE_TEMPLATE, md)));
    current.set("bootstrapConfigTemplate", CapiObjects.strip(objects.get(objects.bootstrapTemplate, md)));
    ObjectNode desired = current.deepCopy();
    desired.set("machineSet", CapiObjects.strip(objects.get(CapiResources.MACHINE_SET, newMachineSet)));
    ObjectNode request = JSON.createObjectNode();
    request.set("settings", JSON.valueToTree(settings));
    request.set("current", current);
    request.set("desired", desired);
    JsonNode answer = hooks.call("CanUpdateMachineSet", request);
    String refusal = handshake.check("CanUpdateMachineSet " + oldMachineSet + " -> " + newMachineSet, answer, current, desired,
        "/spec/template/spec", List.of("machineSet", "infrastructureMachineTemplate", "bootstrapConfigTemplate"),
        List.of("machineSetPatch", "infrastructureMachineTemplatePatch", "bootstrapConfigTemplatePatch"));
    List<String> moving = objects.machines(Markers.SET_NAME_LABEL, oldMachineSet);
    Map<String, UpdateOutcome> outcomes = new LinkedHashMap<>();
    if (refusal != null) {
      moving.forEach(m -> outcomes.put(m, new UpdateOutcome(m, objects.nodeOf(m), false, false, refusal)));
      return outcomes;
    }
    objects.annotate(CapiResources.MACHINE_SET, oldMachineSet, Map.of(Markers.MOVE_TO, newMachineSet), List.of());
    objects.annotate(CapiResources.MACHINE_SET, newMachineSet, Map.of(Markers.RECEIVE_FROM, oldMachineSet), List.of());
    JsonNode desiredMachineSpec = desired.at("/machineSet/spec/template/spec");
    machines.runWindow(moving, Math.max(1, maxUnavailable), m -> moveAndStart(m, newMachineSet, desiredMachineSpec), outcomes);
    long moved = outcomes.values().stream().filter(UpdateOutcome::started).count();
    objects.scale(oldMachineSet, moving.size() - (int) moved);
    objects.scale(newMachineSet, (int) moved);
    objects.annotate(CapiResources.MACHINE_SET, oldMachineSet, Map.of(), List.of(Markers.MOVE_TO));
    objects.annotate(CapiResources.MACHINE_SET, newMachineSet, Map.of(), List.of(Markers.RECEIVE_FROM));
    return outcomes;
  }

  /** The MachineSet controller moves a Machine to the new set; the MD acknowledges; the update starts. */
  private MachineController.Update moveAndStart(String name, String newMachineSet, JsonNode desiredSpec) {
    objects.annotate(CapiResources.MACHINE, name, Map.of(Markers.PENDING_ACK, ""), List.of());
    objects.management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(objects.namespace).withName(name)
        .edit(m -> { m.getMetadata().getLabels().put(Markers.SET_NAME_LABEL, newMachineSet); return m; });
    objects.annotate(CapiResources.MACHINE, name, Map.of(), List.of(Markers.PENDING_ACK));
    GenericKubernetesResource machine = objects.get(CapiResources.MACHINE, name);
    ObjectNode machineSpec = (ObjectNode) JSON.valueToTree(CapiObjects.spec(machine));
    machineSpec.put("version", desiredSpec.path("version").asText());
    handshake.writeDesired(machine, machineSpec, null);
    return new MachineController.Update(name);
  }

  private static String hash(Object template) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(JSON.writeValueAsBytes(template));
      return HexFormat.of().formatHex(digest).substring(0, 5);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }
}
