package dev.inplace.worker.extension;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.KubeVersion;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Iterator;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * CanUpdateMachine and CanUpdateMachineSet: the part of the desired-vs-current difference inplace can
 * apply in place, as base64 RFC 6902 patches over the whole objects, so that CAPI's "patched current
 * equals desired" holds when, and only when, inplace can do all of it. Otherwise it declines: Success
 * with no patches and a message naming what it cannot do. The answer depends on the request alone
 * (sorted paths, no clock), because CAPI caches CanUpdateMachineSet answers for 24 hours.
 *
 * <p>What inplace accepts (docs/capi-extension.md):
 * <ul>
 *   <li>Machine {@code spec.version}: an upgrade within one minor version (no downgrade, no skipped
 *       minor) of a k3s or kubeadm machine;
 *   <li>the Machine fields CAPI's own controllers apply without touching the host: {@code
 *       minReadySeconds}, {@code readinessGates}, {@code deletion} (timeouts) and {@code taints}
 *       (synced onto the Node by the Machine controller);
 *   <li>the bootstrap config's copy of the version ({@code KThreesConfig spec.version}, {@code
 *       KubeadmConfig spec.clusterConfiguration.kubernetesVersion}, k0smotron's {@code
 *       K0sWorkerConfig} and {@code K0sControllerConfig spec.version}) when it equals the new version.
 * </ul>
 * {@code clusterName}, {@code bootstrap}, {@code infrastructureRef} and {@code providerID} are
 * references CAPI leaves out of its comparison; they neither block nor get patched. Every other spec
 * change (files, commands, kubelet arguments, anything in the infrastructure machine) needs a new
 * machine: inplace does not re-run bootstrap.
 */
final class CanUpdateHook {
  private static final Set<String> CAPI_IGNORED = Set.of("clusterName", "bootstrap", "infrastructureRef", "providerID");
  private static final Set<String> BENIGN = Set.of("minReadySeconds", "readinessGates", "deletion", "taints");

  /** Which object of a request this is, and where its compared spec lives. */
  private enum Role {
    MACHINE,
    INFRASTRUCTURE,
    BOOTSTRAP
  }

  private record Slot(String field, String patchField, Role role) {}

  /** The request objects of one hook and the pointer CAPI copies back from a patched object. */
  private record Shape(String hook, String root, List<Slot> slots) {}

  private static final Shape MACHINE =
      new Shape(
          Hooks.CAN_UPDATE_MACHINE,
          "/spec",
          List.of(
              new Slot("machine", "machinePatch", Role.MACHINE),
              new Slot("infrastructureMachine", "infrastructureMachinePatch", Role.INFRASTRUCTURE),
              new Slot("bootstrapConfig", "bootstrapConfigPatch", Role.BOOTSTRAP)));
  private static final Shape MACHINE_SET =
      new Shape(
          Hooks.CAN_UPDATE_MACHINE_SET,
          "/spec/template/spec",
          List.of(
              new Slot("machineSet", "machineSetPatch", Role.MACHINE),
              new Slot("infrastructureMachineTemplate", "infrastructureMachineTemplatePatch", Role.INFRASTRUCTURE),
              new Slot("bootstrapConfigTemplate", "bootstrapConfigTemplatePatch", Role.BOOTSTRAP)));

  private CanUpdateHook() {}

  static ObjectNode canUpdateMachine(JsonNode request) {
    return answer(MACHINE, request);
  }

  static ObjectNode canUpdateMachineSet(JsonNode request) {
    return answer(MACHINE_SET, request);
  }

  private static ObjectNode answer(Shape shape, JsonNode request) {
    HookSettings settings = HookSettings.of(request);
    JsonNode current = request.path("current");
    JsonNode desired = request.path("desired");
    Slot main = shape.slots().get(0);
    for (String side : List.of("current", "desired")) {
      if (!request.path(side).path(main.field()).isObject()) {
        throw new BadRequest(side + "." + main.field() + " is required");
      }
    }
    List<String> problems = new ArrayList<>();
    List<String> changes = new ArrayList<>();
    JsonNode desiredMain = desired.path(main.field());
    String desiredVersion = desiredMain.at(shape.root() + "/version").asText("");
    Optional<Distribution> distribution = distribution(shape, request, settings);

    ObjectNode response = Hooks.response(shape.hook(), Hooks.SUCCESS, "");
    List<Patch> patches = new ArrayList<>();
    for (Slot slot : shape.slots()) {
      JsonNode cur = current.path(slot.field());
      JsonNode des = desired.path(slot.field());
      if (cur.isMissingNode() && des.isMissingNode()) {
        continue;
      }
      if (!cur.isObject() || !des.isObject()) {
        problems.add(slot.field() + " is only on one side of the request");
        continue;
      }
      List<String> accepted = new ArrayList<>();
      JsonNode curRoot = cur.at(shape.root());
      JsonNode desRoot = des.at(shape.root());
      for (String key : differingKeys(curRoot, desRoot)) {
        String where = slot.field() + shape.root().replace('/', '.') + "." + key;
        String path = shape.root() + "/" + key;
        switch (slot.role()) {
          case MACHINE -> {
            if (CAPI_IGNORED.contains(key)) {
              continue;
            }
            if (BENIGN.contains(key)) {
              accepted.add(path);
              changes.add(where);
            } else if (key.equals("version")) {
              Optional<String> refusal = versionRefusal(curRoot.path(key).asText(""), desiredVersion, distribution);
              if (refusal.isPresent()) {
                problems.add(refusal.get());
              } else {
                accepted.add(path);
                changes.add(where + " " + curRoot.path(key).asText("") + " -> " + desiredVersion);
              }
            } else {
              problems.add(where + " changed");
            }
          }
          case BOOTSTRAP -> {
            Optional<String> mirror = versionMirror(cur.path("kind").asText(des.path("kind").asText("")));
            String mirrorKey = mirror.map(m -> m.split("/")[0]).orElse(null);
            if (key.equals(mirrorKey) && onlyMirrorDiffers(curRoot.path(key), desRoot.path(key), mirror.get())) {
              JsonNode wanted = desRoot.at("/" + mirror.get());
              if (wanted.isMissingNode() || wanted.asText().equals(desiredVersion)) {
                accepted.add(shape.root() + "/" + mirror.get());
                changes.add(slot.field() + shape.root().replace('/', '.') + "." + mirror.get().replace('/', '.'));
              } else {
                problems.add(where + " names " + wanted.asText() + ", not the machine's version " + desiredVersion);
              }
            } else {
              problems.add(where + " changed");
            }
          }
          case INFRASTRUCTURE -> problems.add(where + " changed");
        }
      }
      if (!accepted.isEmpty()) {
        patches.add(new Patch(slot, cur, des, JsonPatch.between(cur, des, accepted)));
      }
    }
    if (!problems.isEmpty()) {
      response.put("message", "inplace cannot do this in place: " + String.join("; ", new TreeSet<>(problems)));
      return response;
    }
    for (Patch p : patches) {
      // A check of our own before CAPI makes it: the patch must turn current into desired.
      JsonNode patched = JsonPatch.apply(p.current(), p.ops()).at(shape.root());
      JsonNode wanted = p.desired().at(shape.root());
      if (!withoutIgnored(patched, p.slot()).equals(withoutIgnored(wanted, p.slot()))) {
        response.put("message", "inplace cannot do this in place: its patch for " + p.slot().field()
            + " does not reproduce the desired spec");
        return response;
      }
    }
    if (patches.isEmpty()) {
      response.put("message", "no change for inplace to make");
      return response;
    }
    for (Patch p : patches) {
      ObjectNode patch = JsonNodeFactory.instance.objectNode();
      patch.put("patchType", "JSONPatch");
      String json = JsonPatch.toJson(p.ops()).toString();
      patch.put("patch", Base64.getEncoder().encodeToString(json.getBytes(StandardCharsets.UTF_8)));
      response.set(p.slot().patchField(), patch);
    }
    response.put("message", "inplace can update in place: " + String.join(", ", changes));
    return response;
  }

  private record Patch(Slot slot, JsonNode current, JsonNode desired, List<JsonPatch.Op> ops) {}

  /** The spec keys whose values differ, sorted. */
  private static List<String> differingKeys(JsonNode current, JsonNode desired) {
    TreeSet<String> keys = new TreeSet<>();
    fieldNames(current, keys);
    fieldNames(desired, keys);
    List<String> differing = new ArrayList<>();
    for (String key : keys) {
      if (!current.path(key).equals(desired.path(key))) {
        differing.add(key);
      }
    }
    return differing;
  }

  private static void fieldNames(JsonNode node, Set<String> into) {
    if (node.isObject()) {
      for (Iterator<String> it = node.fieldNames(); it.hasNext(); ) {
        into.add(it.next());
      }
    }
  }

  private static JsonNode withoutIgnored(JsonNode spec, Slot slot) {
    if (slot.role() != Role.MACHINE || !spec.isObject()) {
      return spec;
    }
    ObjectNode copy = ((ObjectNode) spec).deepCopy();
    CAPI_IGNORED.forEach(copy::remove);
    return copy;
  }

  /** Whether {@code current} and {@code desired} (one top-level key) differ only at {@code mirror}. */
  private static boolean onlyMirrorDiffers(JsonNode current, JsonNode desired, String mirror) {
    List<String> rest = JsonPatch.segments("/" + mirror).subList(1, JsonPatch.segments("/" + mirror).size());
    if (rest.isEmpty()) {
      return true; // the key itself is the mirror
    }
    return without(current, rest).equals(without(desired, rest));
  }

  private static JsonNode without(JsonNode node, List<String> path) {
    if (!node.isObject()) {
      return node;
    }
    ObjectNode copy = ((ObjectNode) node).deepCopy();
    ObjectNode parent = copy;
    for (String s : path.subList(0, path.size() - 1)) {
      if (!(parent.get(s) instanceof ObjectNode child)) {
        return copy;
      }
      parent = child;
    }
    parent.remove(path.get(path.size() - 1));
    return copy;
  }

  /** Where a bootstrap config kind keeps its copy of the Kubernetes version, relative to its spec. */
  private static Optional<String> versionMirror(String kind) {
    return switch (kind) {
      case "KThreesConfig", "KThreesConfigTemplate" -> Optional.of("version");
      case "KubeadmConfig", "KubeadmConfigTemplate" -> Optional.of("clusterConfiguration/kubernetesVersion");
      // k0smotron: a worker or controller config may pin the k0s version it bootstraps with.
      case "K0sWorkerConfig", "K0sWorkerConfigTemplate", "K0sControllerConfig" -> Optional.of("version");
      default -> Optional.empty();
    };
  }

  /** The distribution: the {@code distribution} setting, else the bootstrap config's kind. */
  static Optional<Distribution> distributionOf(String bootstrapKind, HookSettings settings) {
    Optional<Distribution> configured = settings.distribution();
    if (configured.isPresent()) {
      return configured;
    }
    return switch (bootstrapKind) {
      case "KThreesConfig", "KThreesConfigTemplate" -> Optional.of(Distribution.K3S);
      case "KubeadmConfig", "KubeadmConfigTemplate" -> Optional.of(Distribution.KUBEADM);
      // k0smotron: workers bootstrap with K0sWorkerConfig, controllers with K0sControllerConfig.
      case "K0sWorkerConfig", "K0sWorkerConfigTemplate", "K0sControllerConfig" -> Optional.of(Distribution.K0S);
      default -> Optional.empty();
    };
  }

  /**
   * As {@link #distributionOf}, falling back to a k3s or k0s version suffix ({@code +k3s1}, {@code
   * +k0s.0}) when no kind is known.
   */
  static Optional<Distribution> distributionOf(String bootstrapKind, HookSettings settings, String version) {
    Optional<Distribution> known = distributionOf(bootstrapKind, settings);
    if (known.isEmpty() && bootstrapKind.isEmpty() && version.contains("+k3s")) {
      return Optional.of(Distribution.K3S);
    }
    if (known.isEmpty() && bootstrapKind.isEmpty() && version.contains("+k0s")) {
      return Optional.of(Distribution.K0S);
    }
    return known;
  }

  private static Optional<Distribution> distribution(Shape shape, JsonNode request, HookSettings settings) {
    String bootstrapField = shape.slots().get(2).field();
    String kind = request.path("desired").path(bootstrapField).path("kind").asText(
        request.path("current").path(bootstrapField).path("kind").asText(""));
    String version = request.path("desired").path(shape.slots().get(0).field()).at(shape.root() + "/version").asText("");
    return distributionOf(kind, settings, version);
  }

  /** Why inplace will not move a machine from {@code from} to {@code to}, if it will not (DESIGN s.6). */
  static Optional<String> versionRefusal(String from, String to, Optional<Distribution> distribution) {
    if (distribution.isEmpty()) {
      return Optional.of("the version changes, but the bootstrap provider is neither k3s (KThreesConfig), kubeadm"
          + " (KubeadmConfig) nor k0s (K0sWorkerConfig, K0sControllerConfig) and no distribution setting names one");
    }
    KubeVersion current;
    KubeVersion wanted;
    try {
      current = KubeVersion.parse(from);
      wanted = KubeVersion.parse(to);
    } catch (IllegalArgumentException e) {
      return Optional.of("version: " + e.getMessage());
    }
    if (wanted.compareTo(current) < 0) {
      return Optional.of("version " + from + " -> " + to + " is a downgrade; downgrades are refused");
    }
    if (current.minorsTo(wanted) > 1) {
      return Optional.of("version " + from + " -> " + to + " skips a minor version; upgrade one minor at a time");
    }
    return Optional.empty();
  }
}
