package dev.inplace.sandbox.extension;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.GenericKubernetesResourceBuilder;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Base64;
import java.util.Comparator;
import java.util.Deque;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.function.Consumer;

/**
 * A small stand-in for CAPI v1.12's in-place update flow (reference/capi-contracts.md s.1.3-1.4),
 * driving the extension over HTTPS the way the controllers do:
 *
 * <ul>
 *   <li>control plane (KCP-like, maxSurge 0): for each Machine not at the control plane's version,
 *       CanUpdateMachine; apply the patches to the current objects, copy back the spec and require
 *       "patched current == desired"; then write the desired specs, the in-progress annotation on the
 *       Machine, infrastructure machine and bootstrap config, and {@code pending-hooks: UpdateMachine};
 * <li>MachineDeployment: a new MachineSet for the new template, CanUpdateMachineSet (same check on
 *       {@code spec.template.spec}), the move annotations, then the Machines moved over and updated
 *       {@code maxUnavailable} at a time;
 *   <li>Machine controller: with every precondition in place, UpdateMachine polled honouring
 *       {@code retryAfterSeconds} until Success with 0, then the annotations removed and the Node's
 *       kubelet version mirrored into the Machine's status. A Failure is retried with backoff, as
 *       controller-runtime does, until the simulated operator gives up.
 * </ul>
 */
final class CapiSimulator {
  static final String IN_PROGRESS = "in-place-updates.internal.cluster.x-k8s.io/update-in-progress";
  static final String PENDING_HOOKS = "runtime.cluster.x-k8s.io/pending-hooks";
  static final String MOVE_TO = "in-place-updates.internal.cluster.x-k8s.io/move-machines-to-machineset";
  static final String RECEIVE_FROM = "in-place-updates.internal.cluster.x-k8s.io/receive-machines-from-machinesets";
  static final String PENDING_ACK = "in-place-updates.internal.cluster.x-k8s.io/pending-acknowledge-move";
  static final String SET_NAME_LABEL = "cluster.x-k8s.io/set-name";
  /** CleanupMachineSpecForDiff: Machine spec fields CAPI leaves out of "patched current == desired". */
  private static final Set<String> NOT_COMPARED = Set.of("clusterName", "bootstrap", "infrastructureRef", "providerID",
      "minReadySeconds", "readinessGates", "deletion", "taints");
  private static final int GIVE_UP_AFTER_FAILURES = 3;
  private static final ObjectMapper JSON = new ObjectMapper();

  static final ResourceDefinitionContext METAL3_MACHINE = context("infrastructure.cluster.x-k8s.io", "v1beta1", "Metal3Machine", "metal3machines");
  static final ResourceDefinitionContext METAL3_MACHINE_TEMPLATE =
      context("infrastructure.cluster.x-k8s.io", "v1beta1", "Metal3MachineTemplate", "metal3machinetemplates");

  /** How one Machine ended. */
  record Outcome(String machine, String node, boolean done, boolean started, String message) {}

  private final KubernetesClient management;
  private final KubernetesClient workload;
  private final HookClient hooks;
  private final Consumer<String> say;
  private final Map<String, String> settings;
  private final String namespace;
  private final boolean kubeadm;
  private final ResourceDefinitionContext bootstrapConfig;
  private final ResourceDefinitionContext bootstrapTemplate;

  CapiSimulator(KubernetesClient management, KubernetesClient workload, HookClient hooks, Consumer<String> say,
      Map<String, String> settings, String namespace, boolean kubeadm) {
    this.management = management;
    this.workload = workload;
    this.hooks = hooks;
    this.say = say;
    this.settings = settings;
    this.namespace = namespace;
    this.kubeadm = kubeadm;
    String prefix = kubeadm ? "Kubeadm" : "KThrees";
    this.bootstrapConfig = context("bootstrap.cluster.x-k8s.io", "v1beta2", prefix + "Config", prefix.toLowerCase() + "configs");
    this.bootstrapTemplate =
        context("bootstrap.cluster.x-k8s.io", "v1beta2", prefix + "ConfigTemplate", prefix.toLowerCase() + "configtemplates");
  }

  // ---- the objects the estate does not hold: bootstrap configs, infrastructure machines, templates ------

  /** Creates each Machine's bootstrap config and Metal3Machine, and each pool's templates, as providers would. */
  void seed(List<String> machines, List<String> pools, String version) {
    for (String name : machines) {
      GenericKubernetesResource machine = get(CapiResources.MACHINE, name);
      boolean controlPlane = labels(machine).containsKey(CapiResources.CONTROL_PLANE_LABEL);
      create(bootstrapConfig, name, bootstrapSpec(version, controlPlane, name));
      create(METAL3_MACHINE, name, Map.of("image", Map.of("url", "http://images.local/edge-os-24.04.qcow2",
          "checksum", "sha256:5e1f"), "hostSelector", Map.of("matchLabels", Map.of("node", name))));
    }
    for (String pool : pools) {
      create(bootstrapTemplate, pool, Map.of("template", Map.of("spec", bootstrapSpec(null, false, null))));
      create(METAL3_MACHINE_TEMPLATE, pool, Map.of("template", Map.of("spec",
          Map.of("image", Map.of("url", "http://images.local/edge-os-24.04.qcow2", "checksum", "sha256:5e1f")))));
    }
  }

  private Map<String, Object> bootstrapSpec(String version, boolean controlPlane, String node) {
    Map<String, Object> spec = new LinkedHashMap<>();
    if (kubeadm) {
      Map<String, Object> cluster = new LinkedHashMap<>(Map.of("apiServer", Map.of("certSANs", List.of("edge.example"))));
      if (version != null && controlPlane) {
        cluster.put("kubernetesVersion", version);
      }
      spec.put("clusterConfiguration", cluster);
      spec.put("joinConfiguration", Map.of("nodeRegistration", Map.of("name", node == null ? "{{ ds.meta_data.local_hostname }}" : node)));
    } else {
      if (version != null && controlPlane) {
        spec.put("version", version); // KThreesControlPlane stamps its version on the configs it creates
      }
      spec.put("agentConfig", Map.of("airGapped", true));
      spec.put("files", List.of(Map.of("path", "/etc/motd", "content", "edge")));
    }
    return spec;
  }

  // ---- the control plane --------------------------------------------------------------------------------

  /** A KCP-like rollout with maxSurge 0: each Machine not at {@code version}, one at a time. */
  Map<String, Outcome> upgradeControlPlane(ResourceDefinitionContext type, String name, String version) {
    management.genericKubernetesResources(type).inNamespace(namespace).withName(name)
        .edit(cp -> { spec(cp).put("version", version); return cp; });
    say.accept(type.getKind() + " " + name + ": spec.version -> " + version);
    List<String> machines = management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace)
        .withLabel(CapiResources.CONTROL_PLANE_LABEL).list().getItems().stream()
        .map(m -> m.getMetadata().getName()).sorted().toList();
    Map<String, Outcome> outcomes = new LinkedHashMap<>();
    for (String machine : machines) {
      if (!outcomes.values().stream().allMatch(Outcome::done)) {
        outcomes.put(machine, new Outcome(machine, nodeOf(machine), false, false, "not started: an earlier control-plane Machine did not finish"));
        continue;
      }
      runWindow(List.of(machine), 1, m -> startControlPlaneMachine(m, version), outcomes);
    }
    return outcomes;
  }

  private Update startControlPlaneMachine(String name, String version) {
    GenericKubernetesResource machine = get(CapiResources.MACHINE, name);
    if (version.equals(spec(machine).get("version"))) {
      return Update.finished(new Outcome(name, nodeOf(name), true, false, "already at " + version));
    }
    ObjectNode current = JSON.createObjectNode();
    current.set("machine", strip(machine));
    current.set("infrastructureMachine", strip(get(METAL3_MACHINE, infraOf(machine))));
    current.set("bootstrapConfig", strip(get(bootstrapConfig, bootstrapOf(machine))));
    ObjectNode desired = current.deepCopy();
    ((ObjectNode) desired.at("/machine/spec")).put("version", version);
    if (kubeadm) {
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
    String refusal = check("CanUpdateMachine " + name, answer, current, desired, "/spec",
        List.of("machine", "infrastructureMachine", "bootstrapConfig"),
        List.of("machinePatch", "infrastructureMachinePatch", "bootstrapConfigPatch"));
    if (refusal != null) {
      return Update.finished(new Outcome(name, nodeOf(name), false, false, refusal));
    }
    writeDesired(machine, desired.at("/machine/spec"), desired.at("/bootstrapConfig/spec"));
    return new Update(name);
  }

  // ---- a MachineDeployment ----------------------------------------------------------------------------

  /** A version bump of a MachineDeployment whose Machines all belong to {@code oldMachineSet}. */
  Map<String, Outcome> upgradeMachineDeployment(String md, String oldMachineSet, String version, int maxUnavailable) {
    management.genericKubernetesResources(CapiResources.MACHINE_DEPLOYMENT).inNamespace(namespace).withName(md)
        .edit(d -> { map(map(spec(d).get("template")).get("spec")).put("version", version); return d; });
    say.accept("MachineDeployment " + md + ": spec.template.spec.version -> " + version);
    GenericKubernetesResource deployment = get(CapiResources.MACHINE_DEPLOYMENT, md);
    GenericKubernetesResource oldSet = get(CapiResources.MACHINE_SET, oldMachineSet);
    Object template = spec(deployment).get("template");
    String newMachineSet = md + "-" + hash(template);
    GenericKubernetesResource newSet = new GenericKubernetesResourceBuilder()
        .withApiVersion(oldSet.getApiVersion()).withKind("MachineSet")
        .withNewMetadata().withName(newMachineSet).withNamespace(namespace).withLabels(labels(oldSet))
        .withAnnotations(Map.of("machinedeployment.clusters.x-k8s.io/revision", "2")).endMetadata().build();
    Map<String, Object> newSpec = new LinkedHashMap<>(spec(oldSet));
    newSpec.put("replicas", 0);
    newSpec.put("template", template);
    newSet.setAdditionalProperty("spec", newSpec);
    management.genericKubernetesResources(CapiResources.MACHINE_SET).inNamespace(namespace).resource(newSet).create();
    say.accept("MachineSet " + newMachineSet + " created for the new template");

    ObjectNode current = JSON.createObjectNode();
    current.set("machineSet", strip(oldSet));
    current.set("infrastructureMachineTemplate", strip(get(METAL3_MACHINE_TEMPLATE, md)));
    current.set("bootstrapConfigTemplate", strip(get(bootstrapTemplate, md)));
    ObjectNode desired = current.deepCopy();
    desired.set("machineSet", strip(get(CapiResources.MACHINE_SET, newMachineSet)));
    ObjectNode request = JSON.createObjectNode();
    request.set("settings", JSON.valueToTree(settings));
    request.set("current", current);
    request.set("desired", desired);
    JsonNode answer = hooks.call("CanUpdateMachineSet", request);
    String refusal = check("CanUpdateMachineSet " + oldMachineSet + " -> " + newMachineSet, answer, current, desired,
        "/spec/template/spec", List.of("machineSet", "infrastructureMachineTemplate", "bootstrapConfigTemplate"),
        List.of("machineSetPatch", "infrastructureMachineTemplatePatch", "bootstrapConfigTemplatePatch"));
    List<String> machines = management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace)
        .withLabel(SET_NAME_LABEL, oldMachineSet).list().getItems().stream()
        .map(m -> m.getMetadata().getName()).sorted(Comparator.naturalOrder()).toList();
    Map<String, Outcome> outcomes = new LinkedHashMap<>();
    if (refusal != null) {
      machines.forEach(m -> outcomes.put(m, new Outcome(m, nodeOf(m), false, false, refusal)));
      return outcomes;
    }
    annotate(CapiResources.MACHINE_SET, oldMachineSet, Map.of(MOVE_TO, newMachineSet), List.of());
    annotate(CapiResources.MACHINE_SET, newMachineSet, Map.of(RECEIVE_FROM, oldMachineSet), List.of());
    JsonNode desiredMachineSpec = desired.at("/machineSet/spec/template/spec");
    runWindow(machines, Math.max(1, maxUnavailable), m -> moveAndStart(m, newMachineSet, desiredMachineSpec), outcomes);
    long moved = outcomes.values().stream().filter(Outcome::started).count();
    scale(oldMachineSet, machines.size() - (int) moved);
    scale(newMachineSet, (int) moved);
    annotate(CapiResources.MACHINE_SET, oldMachineSet, Map.of(), List.of(MOVE_TO));
    annotate(CapiResources.MACHINE_SET, newMachineSet, Map.of(), List.of(RECEIVE_FROM));
    return outcomes;
  }

  /** The MachineSet controller moves a Machine to the new set; the MD acknowledges; the update starts. */
  private Update moveAndStart(String name, String newMachineSet, JsonNode desiredSpec) {
    annotate(CapiResources.MACHINE, name, Map.of(PENDING_ACK, ""), List.of());
    management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace).withName(name)
        .edit(m -> { m.getMetadata().getLabels().put(SET_NAME_LABEL, newMachineSet); return m; });
    annotate(CapiResources.MACHINE, name, Map.of(), List.of(PENDING_ACK));
    GenericKubernetesResource machine = get(CapiResources.MACHINE, name);
    ObjectNode machineSpec = (ObjectNode) JSON.valueToTree(spec(machine));
    machineSpec.put("version", desiredSpec.path("version").asText());
    writeDesired(machine, machineSpec, null);
    return new Update(name);
  }

  // ---- the shared part: "patched current == desired", the desired specs, UpdateMachine ---------------

  /** CAPI's check of a CanUpdate answer; null when in-place may go ahead, else why not. */
  private String check(String what, JsonNode answer, ObjectNode current, ObjectNode desired, String root,
      List<String> objects, List<String> patchFields) {
    if (!"Success".equals(answer.path("status").asText())) {
      return what + " failed: " + answer.path("message").asText();
    }
    List<String> applied = new ArrayList<>();
    boolean equal = true;
    for (int i = 0; i < objects.size(); i++) {
      JsonNode cur = current.path(objects.get(i));
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
      equal &= cleanup(patched.at(root), i == 0).equals(cleanup(desired.path(objects.get(i)).at(root), i == 0));
    }
    if (!equal) {
      return what + " declined (" + answer.path("message").asText() + "): CAPI would replace the Machine";
    }
    say.accept(what + ": in place, patches " + (applied.isEmpty() ? "none" : String.join(", ", applied)));
    return null;
  }

  /** Writes the desired specs with the in-progress markers, pending-hooks last (as the owners do). */
  private void writeDesired(GenericKubernetesResource machine, JsonNode machineSpec, JsonNode bootstrapSpec) {
    String name = machine.getMetadata().getName();
    annotate(METAL3_MACHINE, infraOf(machine), Map.of(IN_PROGRESS, ""), List.of());
    String bootstrap = bootstrapOf(machine);
    management.genericKubernetesResources(bootstrapConfig).inNamespace(namespace).withName(bootstrap).edit(b -> {
      if (bootstrapSpec != null) {
        b.setAdditionalProperty("spec", JSON.convertValue(bootstrapSpec, Map.class));
      }
      annotations(b).put(IN_PROGRESS, "");
      return b;
    });
    management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace).withName(name).edit(m -> {
      m.setAdditionalProperty("spec", JSON.convertValue(machineSpec, Map.class));
      annotations(m).put(IN_PROGRESS, "");
      return m;
    });
    annotate(CapiResources.MACHINE, name, Map.of(PENDING_HOOKS, "UpdateMachine"), List.of());
  }

  /** One Machine the Machine controller is polling. */
  private static final class Update {
    final String machine;
    long dueNanos = System.nanoTime();
    int failures;
    String lastMessage = "";
    Outcome outcome;

    Update(String machine) {
      this.machine = machine;
    }

    static Update finished(Outcome outcome) {
      Update u = new Update(outcome.machine());
      u.outcome = outcome;
      return u;
    }
  }

  /** Starts Machines {@code window} at a time and polls them, each when CAPI would requeue it. */
  private void runWindow(List<String> machines, int window, java.util.function.Function<String, Update> begin,
      Map<String, Outcome> outcomes) {
    Deque<String> queue = new ArrayDeque<>(machines);
    List<Update> active = new ArrayList<>();
    while (!queue.isEmpty() || !active.isEmpty()) {
      while (active.size() < window && !queue.isEmpty()) {
        Update u = begin.apply(queue.poll());
        if (u.outcome != null) {
          outcomes.put(u.machine, u.outcome);
        } else {
          active.add(u);
        }
      }
      if (active.isEmpty()) {
        continue;
      }
      Update next = active.stream().min(Comparator.comparingLong(u -> u.dueNanos)).orElseThrow();
      sleepUntil(next.dueNanos);
      poll(next);
      if (next.outcome != null) {
        outcomes.put(next.machine, next.outcome);
        active.remove(next);
      }
    }
  }

  /** One reconcile of the Machine controller: preconditions, UpdateMachine, then act on the answer. */
  private void poll(Update u) {
    GenericKubernetesResource machine = get(CapiResources.MACHINE, u.machine);
    GenericKubernetesResource infra = get(METAL3_MACHINE, infraOf(machine));
    GenericKubernetesResource bootstrap = get(bootstrapConfig, bootstrapOf(machine));
    boolean ready = annotations(machine).containsKey(IN_PROGRESS)
        && String.valueOf(annotations(machine).get(PENDING_HOOKS)).contains("UpdateMachine")
        && annotations(infra).containsKey(IN_PROGRESS) && annotations(bootstrap).containsKey(IN_PROGRESS)
        && nodeOf(u.machine) != null;
    if (!ready) {
      throw new IllegalStateException("simulator bug: " + u.machine + " is not ready for UpdateMachine");
    }
    ObjectNode desired = JSON.createObjectNode();
    desired.set("machine", strip(machine));
    desired.set("infrastructureMachine", strip(infra));
    desired.set("bootstrapConfig", strip(bootstrap));
    ObjectNode request = JSON.createObjectNode();
    request.set("settings", JSON.valueToTree(settings));
    request.set("desired", desired);
    JsonNode answer;
    try {
      answer = hooks.call("UpdateMachine", request);
    } catch (RuntimeException e) {
      answer = JSON.createObjectNode().put("status", "Failure").put("message", e.getMessage());
    }
    String message = answer.path("message").asText();
    if (!message.equals(u.lastMessage)) {
      say.accept("UpdateMachine " + u.machine + ": " + answer.path("status").asText()
          + (answer.has("retryAfterSeconds") ? " retryAfterSeconds=" + answer.path("retryAfterSeconds").asInt() : "")
          + " " + shorten(message));
      u.lastMessage = message;
    }
    if ("Success".equals(answer.path("status").asText())) {
      u.failures = 0;
      int retry = answer.path("retryAfterSeconds").asInt(0);
      if (retry > 0) {
        u.dueNanos = System.nanoTime() + retry * 1_000_000_000L;
        return;
      }
      complete(machine, infra, bootstrap);
      u.outcome = new Outcome(u.machine, nodeOf(u.machine), true, true, message);
      return;
    }
    // Failure: a reconcile error; controller-runtime retries with backoff. The simulated operator stops after a few.
    u.failures++;
    if (u.failures >= GIVE_UP_AFTER_FAILURES) {
      u.outcome = new Outcome(u.machine, nodeOf(u.machine), false, true, message);
      return;
    }
    u.dueNanos = System.nanoTime() + (1_000_000_000L << (u.failures - 1));
  }

  /** completeInPlaceUpdate: the markers come off; the Machine status mirrors the Node. */
  private void complete(GenericKubernetesResource machine, GenericKubernetesResource infra, GenericKubernetesResource bootstrap) {
    annotate(METAL3_MACHINE, infra.getMetadata().getName(), Map.of(), List.of(IN_PROGRESS));
    annotate(bootstrapConfig, bootstrap.getMetadata().getName(), Map.of(), List.of(IN_PROGRESS));
    annotate(CapiResources.MACHINE, machine.getMetadata().getName(), Map.of(), List.of(IN_PROGRESS, PENDING_HOOKS));
    Node node = workload.nodes().withName(nodeOf(machine.getMetadata().getName())).get();
    String kubelet = node.getStatus().getNodeInfo().getKubeletVersion();
    management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace).withName(machine.getMetadata().getName())
        .editStatus(m -> {
          Map<String, Object> status = new LinkedHashMap<>(map(m.getAdditionalProperties().get("status")));
          Map<String, Object> nodeInfo = new LinkedHashMap<>(map(status.get("nodeInfo")));
          nodeInfo.put("kubeletVersion", kubelet);
          status.put("nodeInfo", nodeInfo);
          m.setAdditionalProperty("status", status);
          return m;
        });
  }

  // ---- helpers ------------------------------------------------------------------------------------------

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

  /** An object as CAPI puts it in a request: apiVersion, kind, name, namespace, labels, annotations, spec. */
  private static ObjectNode strip(GenericKubernetesResource resource) {
    ObjectNode o = JSON.createObjectNode();
    o.put("apiVersion", resource.getApiVersion());
    o.put("kind", resource.getKind());
    ObjectNode metadata = o.putObject("metadata");
    metadata.put("name", resource.getMetadata().getName());
    metadata.put("namespace", resource.getMetadata().getNamespace());
    metadata.set("labels", JSON.valueToTree(labels(resource)));
    metadata.set("annotations", JSON.valueToTree(clean(resource.getMetadata().getAnnotations())));
    o.set("spec", JSON.valueToTree(spec(resource)));
    return o;
  }

  private static Map<String, String> clean(Map<String, String> annotations) {
    Map<String, String> result = new LinkedHashMap<>();
    if (annotations != null) {
      annotations.forEach((k, v) -> {
        if (v != null) {
          result.put(k, v);
        }
      });
    }
    return result;
  }

  private void annotate(ResourceDefinitionContext type, String name, Map<String, String> add, List<String> remove) {
    management.genericKubernetesResources(type).inNamespace(namespace).withName(name).edit(r -> {
      Map<String, String> annotations = annotations(r);
      annotations.putAll(add);
      remove.forEach(annotations::remove);
      return r;
    });
  }

  private static Map<String, String> annotations(GenericKubernetesResource r) {
    Map<String, String> a = new LinkedHashMap<>(clean(r.getMetadata().getAnnotations()));
    r.getMetadata().setAnnotations(a);
    return a;
  }

  private static Map<String, String> labels(GenericKubernetesResource r) {
    return r.getMetadata().getLabels() == null ? new HashMap<>() : new LinkedHashMap<>(r.getMetadata().getLabels());
  }

  private void scale(String machineSet, int replicas) {
    management.genericKubernetesResources(CapiResources.MACHINE_SET).inNamespace(namespace).withName(machineSet)
        .edit(s -> { spec(s).put("replicas", replicas); return s; });
  }

  private GenericKubernetesResource get(ResourceDefinitionContext type, String name) {
    GenericKubernetesResource r = management.genericKubernetesResources(type).inNamespace(namespace).withName(name).get();
    if (r == null) {
      throw new IllegalStateException(type.getKind() + " " + namespace + "/" + name + " not found");
    }
    return r;
  }

  /** Creates an object unless the estate already holds one of that name (then it is used as it is). */
  private void create(ResourceDefinitionContext type, String name, Map<String, Object> spec) {
    if (management.genericKubernetesResources(type).inNamespace(namespace).withName(name).get() != null) {
      return;
    }
    GenericKubernetesResource r = new GenericKubernetesResourceBuilder()
        .withApiVersion(type.getGroup() + "/" + type.getVersion()).withKind(type.getKind())
        .withNewMetadata().withName(name).withNamespace(namespace).endMetadata().build();
    r.setAdditionalProperty("spec", spec);
    management.genericKubernetesResources(type).inNamespace(namespace).resource(r).create();
  }

  String nodeOf(String machine) {
    Object status = get(CapiResources.MACHINE, machine).getAdditionalProperties().get("status");
    return map(map(status).get("nodeRef")).get("name") instanceof String s ? s : null;
  }

  private static String infraOf(GenericKubernetesResource machine) {
    return String.valueOf(map(spec(machine).get("infrastructureRef")).get("name"));
  }

  private static String bootstrapOf(GenericKubernetesResource machine) {
    return String.valueOf(map(map(spec(machine).get("bootstrap")).get("configRef")).get("name"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource r) {
    Object spec = r.getAdditionalProperties().get("spec");
    Map<String, Object> copy = spec instanceof Map<?, ?> m ? new LinkedHashMap<>((Map<String, Object>) m) : new LinkedHashMap<>();
    r.setAdditionalProperty("spec", copy);
    return copy;
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Object value) {
    return value instanceof Map<?, ?> m ? (Map<String, Object>) m : new LinkedHashMap<>();
  }

  private static String hash(Object template) {
    try {
      byte[] digest = MessageDigest.getInstance("SHA-256").digest(JSON.writeValueAsBytes(template));
      return HexFormat.of().formatHex(digest).substring(0, 5);
    } catch (Exception e) {
      throw new IllegalStateException(e);
    }
  }

  private static String shorten(String text) {
    return text.length() > 180 ? text.substring(0, 180) + "..." : text;
  }

  private static void sleepUntil(long nanos) {
    long wait = nanos - System.nanoTime();
    if (wait > 0) {
      try {
        Thread.sleep(wait / 1_000_000, (int) (wait % 1_000_000));
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IllegalStateException("interrupted", e);
      }
    }
  }

  private static ResourceDefinitionContext context(String group, String version, String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup(group).withVersion(version).withKind(kind)
        .withPlural(plural).withNamespaced(true).build();
  }
}
