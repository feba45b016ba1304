package dev.inplace.worker.extension;

import dev.inplace.worker.intake.IntakeRefusal;
import dev.inplace.worker.intake.IntakeRequest;
import dev.inplace.worker.intake.IntakeUnavailable;
import dev.inplace.worker.intake.RunInputs;
import dev.inplace.worker.intake.RunIntake;
import dev.inplace.workflows.api.MachineInfo;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.Namespace;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import org.slf4j.MDC;

/**
 * UpdateMachine: starts or finds the NodeUpgrade run for a Machine and a hash of its desired spec,
 * and answers without waiting for it. Success with {@code retryAfterSeconds} while it runs; Success
 * with 0 only when the run completed and the Node reports the target kubelet version; Failure with
 * the reason when it failed.
 *
 * <p>After a failed run the same desired spec is not tried again automatically if the run had
 * changed the node (it was rolled back, or its rollback failed): retrying could take the node through
 * drain and rollback on every CAPI retry. A new attempt needs a new desired spec, or the annotation
 * {@value #RETRY_TOKEN_ANNOTATION} set to a new value on the Machine. A run that failed in preflight
 * (nothing touched: host unreachable, node not Ready) is started again on the next call.
 */
final class UpdateMachineHook {
  private static final Logger log = LoggerFactory.getLogger(UpdateMachineHook.class);

  /** On the Machine: the NodeUpgrade run the hook started last (so two specs never run at once). */
  static final String RUN_ANNOTATION = "upgrade.inplace.dev/update-run";
  /** On the Machine, set by an operator: a new value asks for a new attempt of the same spec. */
  static final String RETRY_TOKEN_ANNOTATION = "upgrade.inplace.dev/retry-token";

  private static final ObjectMapper CANONICAL =
      JsonMapper.builder().enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS).build();
  /**
   * On the Machine's Namespace: the opt-in label the ExtensionConfig's namespaceSelector uses.
   * Checked again here, so a caller that reaches the Service directly cannot act elsewhere.
   */
  static final String OPT_IN_LABEL = "upgrade.inplace.dev/in-place";

  private final KubernetesClient management;
  private final NodeRuns runs;
  private final WorkloadNodes nodes;
  private final RunIntake intake;

  UpdateMachineHook(KubernetesClient management, NodeRuns runs, WorkloadNodes nodes, RunIntake intake) {
    this.management = management;
    this.runs = runs;
    this.nodes = nodes;
    this.intake = intake;
  }

  ObjectNode handle(JsonNode request) {
    HookSettings settings = HookSettings.of(request);
    JsonNode desired = request.path("desired").path("machine");
    if (!desired.isObject()) {
      throw new BadRequest("desired.machine is required");
    }
    String name = required(desired, "/metadata/name");
    String namespace = required(desired, "/metadata/namespace");
    String target = required(desired, "/spec/version");
    if (!KubeVersion.isValid(target)) {
      throw new BadRequest("desired.machine.spec.version '" + target + "' is not a Kubernetes version");
    }
    if (!optedIn(namespace)) {
      // The same answer whether or not the namespace, Machine, Secrets or ConfigMap exist.
      return Hooks.failure(Hooks.UPDATE_MACHINE, "namespace " + namespace + " is not opted in to in-place updates"
          + " (label " + OPT_IN_LABEL + "=true)");
    }
    GenericKubernetesResource machine =
        management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace).withName(name).get();
    if (machine == null) {
      return Hooks.failure(Hooks.UPDATE_MACHINE, "Machine " + namespace + "/" + name + " not found");
    }
    Map<String, Object> props = machine.getAdditionalProperties();
    // CAPI writes the desired spec to the Machine before it calls UpdateMachine: a request for another
    // version is not CAPI's, and the version comes from the Machine, not from whoever sent the request.
    String stored = text(props, "spec", "version");
    if (!target.equals(stored)) {
      return Hooks.failure(Hooks.UPDATE_MACHINE, "desired.machine.spec.version " + target + " is not Machine "
          + namespace + "/" + name + "'s spec.version " + (stored == null ? "(none)" : stored)
          + ": CAPI writes the desired spec to the Machine before it calls UpdateMachine");
    }
    String nodeName = text(props, "status", "nodeRef", "name");
    if (nodeName == null) {
      return Hooks.failure(Hooks.UPDATE_MACHINE, "Machine " + namespace + "/" + name + " has no Node yet (status.nodeRef)");
    }
    String clusterName = Optional.ofNullable(text(props, "spec", "clusterName"))
        .orElse(label(machine, CapiResources.CLUSTER_NAME_LABEL));
    if (clusterName == null) {
      return Hooks.failure(Hooks.UPDATE_MACHINE, "Machine " + namespace + "/" + name + " names no cluster");
    }
    ClusterRef cluster = new ClusterRef(namespace, clusterName);
    String id = WorkflowIds.nodeUpgradeForHook(namespace, name, specHash(request.path("desired"), annotation(machine, RETRY_TOKEN_ANNOTATION)));
    MDC.put("cluster", cluster.toString());
    MDC.put("node", nodeName);
    try {
      return update(settings, request, machine, cluster, nodeName, target, id);
    } finally {
      MDC.remove("cluster");
      MDC.remove("node");
    }
  }

  private ObjectNode update(
      HookSettings settings, JsonNode request, GenericKubernetesResource machine, ClusterRef cluster, String nodeName,
      String target, String id) {
    String name = machine.getMetadata().getName();
    // Never two upgrades of one node at once: a run from a custom resource, or one for an older spec.
    String crRun = WorkflowIds.nodeUpgrade(cluster.namespace(), name, target);
    if (runs.find(crRun).state() == NodeRuns.State.RUNNING) {
      return inProgress(settings, "waiting for run " + crRun + " (started from a custom resource) to finish");
    }
    String previous = annotation(machine, RUN_ANNOTATION);
    if (previous != null && !previous.equals(id) && runs.find(previous).state() == NodeRuns.State.RUNNING) {
      return inProgress(settings, "waiting for run " + previous + " (an earlier desired spec) to finish");
    }
    NodeRuns.Run run = runs.find(id);
    switch (run.state()) {
      case RUNNING:
        return inProgress(settings, "upgrading node " + nodeName + " to " + target + " (" + id + "): " + run.detail());
      case COMPLETED:
        return completed(settings, cluster, nodeName, target, id);
      case FAILED:
        if (run.nodeChanged()) {
          return Hooks.failure(Hooks.UPDATE_MACHINE, "run " + id + " failed: " + run.detail()
              + "; not retried for the same spec: change the desired spec or set the Machine annotation "
              + RETRY_TOKEN_ANNOTATION + " to a new value to try again");
        }
        // The new attempt goes through the intake too: what it refuses is the answer, as for a first run.
        ObjectNode again = start(settings, request, machine, cluster, nodeName, target, id);
        return again != null ? again : Hooks.failure(Hooks.UPDATE_MACHINE, "run " + id
            + " failed before changing the node: " + run.detail() + "; a new attempt has been started");
      case NOT_FOUND:
        ObjectNode refused = start(settings, request, machine, cluster, nodeName, target, id);
        return refused != null ? refused : inProgress(settings, "started upgrading node " + nodeName + " to " + target + " (" + id + ")");
      default:
        return Hooks.failure(Hooks.UPDATE_MACHINE, "cannot tell how run " + id + " is doing: " + run.detail());
    }
  }

  /** Done only when the Node itself reports the target version. */
  private ObjectNode completed(HookSettings settings, ClusterRef cluster, String nodeName, String target, String id) {
    Optional<String> kubelet;
    try {
      kubelet = nodes.kubeletVersion(cluster, nodeName);
    } catch (RuntimeException e) {
      return inProgress(settings, "run " + id + " completed; cannot read Node " + nodeName + " yet ("
          + e.getClass().getSimpleName() + ")");
    }
    // nodeRuns: a k0s Node reports v1.31.2+k0s for every release v1.31.2+k0s.N (docs/k0s.md).
    if (kubelet.isPresent() && KubeVersion.nodeRuns(kubelet.get(), target)) {
      ObjectNode done = Hooks.response(Hooks.UPDATE_MACHINE, Hooks.SUCCESS, "node " + nodeName + " runs " + target);
      done.put("retryAfterSeconds", 0);
      return done;
    }
    return Hooks.failure(Hooks.UPDATE_MACHINE, "run " + id + " completed but Node " + nodeName + " reports kubelet "
        + kubelet.orElse("(no such Node)") + ", not " + target);
  }

  /** Has the one intake build the run's inputs and starts it; a Failure answer when refused, else null. */
  private ObjectNode start(
      HookSettings settings, JsonNode request, GenericKubernetesResource machine, ClusterRef cluster, String nodeName,
      String target, String id) {
    NodeUpgradeRequest upgrade;
    try {
      upgrade = upgradeRequest(settings, request, machine, cluster, nodeName, target);
    } catch (IntakeRefusal e) {
      return Hooks.failure(Hooks.UPDATE_MACHINE, "cannot upgrade node " + nodeName + ": " + e.type() + ": "
          + e.getMessage());
    } catch (IntakeUnavailable e) {
      return Hooks.failure(Hooks.UPDATE_MACHINE, "cannot upgrade node " + nodeName + " yet: " + e.getMessage()
          + "; try again");
    }
    ObjectNode patch = JsonNodeFactory.instance.objectNode();
    ObjectNode annotations = patch.putObject("metadata").putObject("annotations");
    annotations.put(RUN_ANNOTATION, id);
    // What the run's host activities confirm its input against (a workflow input is not authority).
    annotations.put(ClusterApiActivities.HOST_ACCESS_ANNOTATION, hostAccess(upgrade, settings.hostProfile()));
    management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(cluster.namespace())
        .withName(machine.getMetadata().getName())
        .patch(PatchContext.of(PatchType.JSON_MERGE), patch.toString());
    boolean started = runs.start(id, upgrade);
    log.info("UpdateMachine {}: {} run {} to {}", machine.getMetadata().getName(), started ? "started" : "found",
        id, target);
    return null;
  }

  /**
   * The SSH settings and host profile this door gave the run, as the Machine's {@link
   * ClusterApiActivities#HOST_ACCESS_ANNOTATION} records them: what the host activities accept.
   */
  static String hostAccess(NodeUpgradeRequest upgrade, String hostProfile) {
    ObjectNode access = JsonNodeFactory.instance.objectNode();
    access.put("user", upgrade.ssh().user());
    access.put("port", upgrade.ssh().port());
    access.put("privateKeySecret", upgrade.ssh().privateKeySecret());
    access.put("knownHostsSecret", upgrade.ssh().knownHostsSecret());
    if (upgrade.ssh().jumpHost() != null && !upgrade.ssh().jumpHost().isBlank()) {
      access.put("jumpHost", upgrade.ssh().jumpHost());
    }
    access.put("distribution", upgrade.distribution().name());
    access.put("os", upgrade.profile().os().name().toLowerCase(java.util.Locale.ROOT));
    if (hostProfile != null) {
      access.put("hostProfile", hostProfile);
    }
    return access.toString();
  }

  /** The Machine as the intake sees it, through {@link UpdateMachineAsk}; then what only this door decides. */
  private NodeUpgradeRequest upgradeRequest(
      HookSettings settings, JsonNode request, GenericKubernetesResource machine, ClusterRef cluster, String nodeName,
      String target) throws IntakeRefusal {
    boolean controlPlane = label(machine, CapiResources.CONTROL_PLANE_LABEL) != null;
    // No Machine version: CAPI has already written the desired one; what the node runs is its kubelet's.
    MachineInfo info = new MachineInfo(machine.getMetadata().getName(), nodeName,
        controlPlane ? NodeRole.CONTROL_PLANE : NodeRole.WORKER, address(machine), null,
        currentKubelet(cluster, nodeName), "");
    String bootstrapKind = bootstrapKind(request, machine);
    IntakeRequest ask = UpdateMachineAsk.of(settings, bootstrapKind, cluster, target, info);
    RunInputs inputs = intake.admit(ask);
    // No parent run marks the Machine here: the NodeUpgrade run marks it skip-remediation itself.
    NodeUpgradeRequest upgrade = inputs.request(info).withMarkMachine(true);
    if (controlPlane && ask.distribution().hasUpgradeCommand()) {
      // kubeadm: the first control plane to move runs `kubeadm upgrade apply`; KCP moves them one at a time.
      boolean first = nodes.otherControlPlaneVersions(cluster, nodeName).stream()
          .noneMatch(v -> KubeVersion.nodeRuns(v, target));
      upgrade = upgrade.withFirstControlPlane(first);
    }
    return upgrade;
  }

  /**
   * The bootstrap config's kind (it picks the distribution): the Machine's own configRef; a request
   * naming another kind is refused. Only a Machine without a configRef takes the request's.
   */
  private static String bootstrapKind(JsonNode request, GenericKubernetesResource machine) throws IntakeRefusal {
    String asked = request.path("desired").path("bootstrapConfig").path("kind").asText("");
    String stored = text(machine.getAdditionalProperties(), "spec", "bootstrap", "configRef", "kind");
    if (stored == null) {
      return asked;
    }
    if (!asked.isEmpty() && !asked.equals(stored)) {
      throw IntakeRefusal.invalid("desired.bootstrapConfig.kind " + asked + " is not the kind of Machine "
          + machine.getMetadata().getNamespace() + "/" + machine.getMetadata().getName() + "'s bootstrap config ("
          + stored + ")");
    }
    return stored;
  }

  /** What the Node's kubelet reports, or null when it cannot be read (its NodeUpgrade preflight checks again). */
  private String currentKubelet(ClusterRef cluster, String nodeName) {
    try {
      return nodes.kubeletVersion(cluster, nodeName).orElse(null);
    } catch (RuntimeException e) {
      return null;
    }
  }

  private boolean optedIn(String namespace) {
    Namespace ns = management.namespaces().withName(namespace).get();
    Map<String, String> labels = ns == null || ns.getMetadata().getLabels() == null ? Map.of()
        : ns.getMetadata().getLabels();
    return "true".equals(labels.get(OPT_IN_LABEL));
  }

  private static ObjectNode inProgress(HookSettings settings, String message) {
    ObjectNode o = Hooks.response(Hooks.UPDATE_MACHINE, Hooks.SUCCESS, message);
    o.put("retryAfterSeconds", settings.retryAfterSeconds());
    return o;
  }

  /**
   * sha256 (first 16 hex digits) of the desired Machine, infrastructure machine and bootstrap config
   * specs in canonical form, plus the retry token when an operator set one.
   */
  static String specHash(JsonNode desired, String retryToken) {
    ObjectNode subject = JsonNodeFactory.instance.objectNode();
    for (String field : List.of("machine", "infrastructureMachine", "bootstrapConfig")) {
      JsonNode spec = desired.path(field).path("spec");
      // A request without one of the objects (a Machine with no bootstrap config) hashes it as null.
      subject.set(field, spec.isMissingNode() ? com.fasterxml.jackson.databind.node.NullNode.getInstance() : spec.deepCopy());
    }
    if (retryToken != null) {
      subject.put("retryToken", retryToken);
    }
    try {
      Object plain = CANONICAL.treeToValue(subject, Object.class);
      byte[] bytes = CANONICAL.writeValueAsString(plain).getBytes(StandardCharsets.UTF_8);
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes)).substring(0, 16);
    } catch (JsonProcessingException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot hash a desired spec", e);
    }
  }

  /** The first InternalIP of the Machine's {@code status.addresses}, else the first ExternalIP. */
  private static String address(GenericKubernetesResource machine) throws IntakeRefusal {
    Object status = machine.getAdditionalProperties().get("status");
    Object addresses = status instanceof Map<?, ?> s ? s.get("addresses") : null;
    if (addresses instanceof List<?> list) {
      for (String type : List.of("InternalIP", "ExternalIP")) {
        for (Object a : list) {
          if (a instanceof Map<?, ?> m && type.equals(m.get("type")) && m.get("address") instanceof String text
              && !text.isBlank()) {
            return text;
          }
        }
      }
    }
    // As the custom resources' Cluster read words it (ClusterInventoryReader).
    throw IntakeRefusal.invalid("Machine " + machine.getMetadata().getNamespace() + "/" + machine.getMetadata().getName()
        + " has no InternalIP or ExternalIP in status.addresses");
  }

  private static String required(JsonNode object, String pointer) {
    JsonNode value = object.at(pointer);
    if (!value.isTextual() || value.asText().isBlank()) {
      throw new BadRequest("desired.machine" + pointer.replace('/', '.') + " is required");
    }
    return value.asText();
  }

  private static String text(Map<String, Object> props, String... path) {
    Object current = props;
    for (String key : path) {
      if (!(current instanceof Map<?, ?> map)) {
        return null;
      }
      current = map.get(key);
    }
    return current instanceof String s && !s.isBlank() ? s : null;
  }

  private static String label(GenericKubernetesResource r, String key) {
    Map<String, String> labels = r.getMetadata().getLabels();
    return labels == null ? null : labels.get(key);
  }

  private static String annotation(GenericKubernetesResource r, String key) {
    Map<String, String> annotations = r.getMetadata().getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }
}
