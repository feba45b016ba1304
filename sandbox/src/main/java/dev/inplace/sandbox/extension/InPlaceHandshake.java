package dev.inplace.sandbox.extension;

import static dev.inplace.sandbox.extension.CapiObjects.JSON;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * The part of CAPI's in-place flow both owner controllers (control plane, MachineSet) share: checking
 * a CanUpdate answer ("patched current == desired"), then writing the desired specs with the
 * in-progress markers, pending-hooks last, which hands the Machine to the Machine controller.
 */
final class InPlaceHandshake {
  /** CleanupMachineSpecForDiff: Machine spec fields CAPI leaves out of "patched current == desired". */
  private static final Set<String> NOT_COMPARED = Set.of("clusterName", "bootstrap", "infrastructureRef", "providerID",
      "minReadySeconds", "readinessGates", "deletion", "taints");

  private final CapiObjects objects;
  private final Consumer<String> say;

  InPlaceHandshake(CapiObjects objects, Consumer<String> say) {
    this.objects = objects;
    this.say = say;
  }

  /** CAPI's check of a CanUpdate answer; null when in-place may go ahead, else why not. */
  String check(String what, JsonNode answer, ObjectNode current, ObjectNode desired, String root,
      List<String> objectNames, List<String> patchFields) {
    if (!"Success".equals(answer.path("status").asText())) {
      return what + " failed: " + answer.path("message").asText();
    }
    List<String> applied = new ArrayList<>();
    boolean equal = true;
    for (int i = 0; i < objectNames.size(); i++) {
      JsonNode cur = current.path(objectNames.get(i));
      JsonNode patch = answer.path(patchFields.get(i));
      JsonNode patched = cur;
      if (patch.isObject()) {
        if (!"JSONPatch".equals(patch.path("patchType").asText())) {
          return what + ": unsupported patchType " + patch.path("patchType").asText();
        }
        try {
          JsonNode ops = JSON.readTree(new String(Base64.getDecoder().decode(patch.path("patch").asText()), StandardCharsets.UTF_8));
          JsonNode whole = Rfc6902.apply(cur, ops);
          patched = copySpec(cur, whole, root);
          String object = patchFields.get(i).replace("Patch", "");
          ops.forEach(op -> applied.add(object + ":" + op.path("op").asText() + " " + op.path("path").asText()));
        } catch (Exception e) {
          return what + ": patch cannot be applied: " + e.getMessage();
        }
      }
      equal &= cleanup(patched.at(root), i == 0).equals(cleanup(desired.path(objectNames.get(i)).at(root), i == 0));
    }
    if (!equal) {
      return what + " declined (" + answer.path("message").asText() + "): CAPI would replace the Machine";
    }
    say.accept(what + ": in place, patches " + (applied.isEmpty() ? "none" : String.join(", ", applied)));
    return null;
  }

  /** Writes the desired specs with the in-progress markers, pending-hooks last (as the owners do). */
  void writeDesired(GenericKubernetesResource machine, JsonNode machineSpec, JsonNode bootstrapSpec) {
    String name = machine.getMetadata().getName();
    objects.annotate(CapiObjects.METAL3_MACHINE, CapiObjects.infraOf(machine), Map.of(Markers.IN_PROGRESS, ""), List.of());
    String bootstrap = CapiObjects.bootstrapOf(machine);
    objects.management.genericKubernetesResources(objects.bootstrapConfig).inNamespace(objects.namespace).withName(bootstrap).edit(b -> {
      if (bootstrapSpec != null) {
        b.setAdditionalProperty("spec", JSON.convertValue(bootstrapSpec, Map.class));
      }
      CapiObjects.annotations(b).put(Markers.IN_PROGRESS, "");
      return b;
    });
    objects.management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(objects.namespace).withName(name).edit(m -> {
      m.setAdditionalProperty("spec", JSON.convertValue(machineSpec, Map.class));
      CapiObjects.annotations(m).put(Markers.IN_PROGRESS, "");
      return m;
    });
    objects.annotate(CapiResources.MACHINE, name, Map.of(Markers.PENDING_HOOKS, "UpdateMachine"), List.of());
  }

  /** CopySpec: only the spec part at {@code root} is taken from the patched object. */
  private static JsonNode copySpec(JsonNode current, JsonNode patched, String root) {
    ObjectNode result = current.deepCopy();
    String[] parts = root.substring(1).split("/");
    ObjectNode parent = result;
    for (int i = 0; i < parts.length - 1; i++) {
      parent = (ObjectNode) parent.get(parts[i]);
    }
    parent.set(parts[parts.length - 1], patched.at(root));
    return result;
  }

  private static JsonNode cleanup(JsonNode spec, boolean machine) {
    if (!machine || !spec.isObject()) {
      return spec;
    }
    ObjectNode copy = spec.deepCopy();
    NOT_COMPARED.forEach(copy::remove);
    return copy;
  }
}
