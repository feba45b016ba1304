package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.ResourceFields.annotation;
import static dev.inplace.activities.capi.ResourceFields.at;
import static dev.inplace.activities.capi.ResourceFields.label;
import static dev.inplace.activities.capi.ResourceFields.name;
import static dev.inplace.activities.capi.ResourceFields.string;
import static dev.inplace.workflows.api.ClusterApiActivities.CLONED_FROM_GROUPKIND_ANNOTATION;
import static dev.inplace.workflows.api.ClusterApiActivities.CLONED_FROM_NAME_ANNOTATION;
import static dev.inplace.workflows.api.ClusterApiActivities.KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.List;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Records one node's upgrade on its Machine and, for kubeadm control planes, on what
 * KubeadmControlPlane compares to decide a Machine is up to date (capi-contracts.md s.3.3, EKS-A's
 * {@code updateResources} in s.5.3): the KubeadmConfig spec, the InfraMachine's cloned-from
 * annotations and the Machine's cluster-configuration annotation.
 *
 * <p>Order: KubeadmConfig, InfraMachine, then the Machine's annotation and {@code spec.version} in
 * one patch. EKS-A sets the version first; here it comes last, so a Machine at the version has the
 * rest recorded too, and a run that crashed half-way (which a parent then sees as "Machine not at
 * the target") records the rest again. Each patch observes first and is skipped when already done.
 */
final class MachineBookkeeping {
  private static final Logger log = LoggerFactory.getLogger(MachineBookkeeping.class);

  /** A Machine's version and the patches done, in order. */
  record Recorded(String previousVersion, List<String> patches) {}

  private final CapiObjectStore store;
  private final InfraMachineTypes infraTypes;

  MachineBookkeeping(CapiObjectStore store, InfraMachineTypes infraTypes) {
    this.store = store;
    this.infraTypes = infraTypes;
  }

  Recorded record(String namespace, String machineName, String version, Distribution distribution, NodeRole role) {
    GenericKubernetesResource machine =
        store.get(CapiResources.MACHINE, namespace, machineName, UpgradeFailures.MACHINE_NOT_FOUND);
    String what = "Machine " + namespace + "/" + machineName;
    if (machine == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.MACHINE_NOT_FOUND, what + " not found");
    }
    String previous = string(machine, "spec", "version");
    List<String> patches = new ArrayList<>();
    String clusterConfiguration = null;
    if (distribution == Distribution.KUBEADM && role == NodeRole.CONTROL_PLANE) {
      GenericKubernetesResource kcp = controlPlaneOf(namespace, machine, what);
      clusterConfiguration = json(at(kcp, "spec", "kubeadmConfigSpec", "clusterConfiguration"));
      recordKubeadmConfig(namespace, machine, kcp, patches);
      recordInfraMachine(namespace, machine, kcp, patches);
    }
    recordMachine(machine, what, version, previous, clusterConfiguration, patches);
    if (patches.isEmpty()) {
      log.info("{} already records {}", what, version);
    } else {
      log.info("{}: {}", what, patches);
    }
    return new Recorded(previous, patches);
  }

  /** The Machine's KubeadmControlPlane: its control-plane-name label, else the Cluster's reference. */
  private GenericKubernetesResource controlPlaneOf(String namespace, GenericKubernetesResource machine, String what) {
    String name = label(machine, CapiResources.CONTROL_PLANE_NAME_LABEL);
    if (name == null || name.isBlank()) {
      String cluster = string(machine, "spec", "clusterName");
      GenericKubernetesResource clusterObject =
          cluster == null ? null : store.get(CapiResources.CLUSTER, namespace, cluster, UpgradeFailures.CLUSTER_NOT_FOUND);
      name = clusterObject == null ? null : string(clusterObject, "spec", "controlPlaneRef", "name");
    }
    GenericKubernetesResource kcp =
        name == null ? null : store.get(CapiResources.KUBEADM_CONTROL_PLANE, namespace, name, UpgradeFailures.INVALID_REQUEST);
    if (kcp == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST,
          what + ": its KubeadmControlPlane " + (name == null ? "(no control-plane-name label)" : name) + " not found");
    }
    if (!(at(kcp, "spec", "kubeadmConfigSpec") instanceof java.util.Map<?, ?>)) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST,
          "KubeadmControlPlane " + namespace + "/" + name + " has no spec.kubeadmConfigSpec");
    }
    return kcp;
  }

  /**
   * KubeadmConfig spec = KubeadmControlPlane spec.kubeadmConfigSpec, keeping initConfiguration and
   * joinConfiguration only where the Machine's config had them (the first Machine was initialised,
   * the others joined), as EKS-A does.
   */
  private void recordKubeadmConfig(
      String namespace, GenericKubernetesResource machine, GenericKubernetesResource kcp, List<String> patches) {
    String kind = string(machine, "spec", "bootstrap", "configRef", "kind");
    String name = string(machine, "spec", "bootstrap", "configRef", "name");
    if (!"KubeadmConfig".equals(kind) || name == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST,
          "Machine " + namespace + "/" + name(machine) + " has no KubeadmConfig in spec.bootstrap.configRef");
    }
    GenericKubernetesResource config =
        store.get(CapiResources.KUBEADM_CONFIG, namespace, name, UpgradeFailures.INVALID_REQUEST);
    if (config == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, "KubeadmConfig " + namespace + "/" + name + " not found");
    }
    JsonNode current = CapiObjectStore.JSON.valueToTree(at(config, "spec"));
    ObjectNode desired = CapiObjectStore.JSON.valueToTree(at(kcp, "spec", "kubeadmConfigSpec"));
    for (String kept : List.of("initConfiguration", "joinConfiguration")) {
      if (current == null || current.get(kept) == null || current.get(kept).isNull()) {
        desired.remove(kept);
      }
    }
    ObjectNode diff = MergePatches.diff(current, desired);
    if (diff.isEmpty()) {
      return;
    }
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    patch.putObject("metadata").put("resourceVersion", config.getMetadata().getResourceVersion());
    patch.set("spec", diff);
    store.patch(CapiResources.KUBEADM_CONFIG, config, patch, UpgradeFailures.INVALID_REQUEST);
    patches.add("KubeadmConfig " + namespace + "/" + name + " spec = KubeadmControlPlane " + name(kcp)
        + " spec.kubeadmConfigSpec (" + String.join(", ", fieldNames(diff)) + ")");
  }

  /** InfraMachine cloned-from annotations = the KubeadmControlPlane's machine template. */
  private void recordInfraMachine(
      String namespace, GenericKubernetesResource machine, GenericKubernetesResource kcp, List<String> patches) {
    String group = string(machine, "spec", "infrastructureRef", "apiGroup");
    String kind = string(machine, "spec", "infrastructureRef", "kind");
    String name = string(machine, "spec", "infrastructureRef", "name");
    String templateName = string(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "name");
    String templateGroup = string(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "apiGroup");
    String templateKind = string(kcp, "spec", "machineTemplate", "spec", "infrastructureRef", "kind");
    if (templateName == null) { // v1beta1: machineTemplate.infrastructureRef with an apiVersion
      templateName = string(kcp, "spec", "machineTemplate", "infrastructureRef", "name");
      templateKind = string(kcp, "spec", "machineTemplate", "infrastructureRef", "kind");
      String apiVersion = string(kcp, "spec", "machineTemplate", "infrastructureRef", "apiVersion");
      templateGroup = apiVersion == null || !apiVersion.contains("/") ? null : apiVersion.substring(0, apiVersion.indexOf('/'));
    }
    if (group == null || kind == null || name == null || templateName == null || templateKind == null
        || templateGroup == null) {
      log.info("Machine {}/{}: no complete infrastructure or template reference; cloned-from left as is",
          namespace, name(machine));
      return;
    }
    ResourceDefinitionContext type = infraTypes.resolve(group, kind);
    GenericKubernetesResource infra = store.get(type, namespace, name, UpgradeFailures.INVALID_REQUEST);
    if (infra == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, kind + " " + namespace + "/" + name + " not found");
    }
    String groupKind = templateKind + "." + templateGroup;
    if (templateName.equals(annotation(infra, CLONED_FROM_NAME_ANNOTATION))
        && groupKind.equals(annotation(infra, CLONED_FROM_GROUPKIND_ANNOTATION))) {
      return;
    }
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    patch.putObject("metadata").putObject("annotations")
        .put(CLONED_FROM_NAME_ANNOTATION, templateName)
        .put(CLONED_FROM_GROUPKIND_ANNOTATION, groupKind);
    store.patch(type, infra, patch, UpgradeFailures.INVALID_REQUEST);
    patches.add(kind + " " + namespace + "/" + name + " cloned-from " + groupKind + " " + templateName);
  }

  /** The Machine's cluster-configuration annotation (kubeadm control planes) and spec.version, in one patch. */
  private void recordMachine(
      GenericKubernetesResource machine, String what, String version, String previous, String clusterConfiguration,
      List<String> patches) {
    boolean versionChanges = !version.equals(previous);
    boolean annotationChanges =
        clusterConfiguration != null
            && !sameJson(annotation(machine, KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION), clusterConfiguration);
    if (!versionChanges && !annotationChanges) {
      return;
    }
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    ObjectNode metadata = patch.putObject("metadata");
    metadata.put("resourceVersion", machine.getMetadata().getResourceVersion());
    List<String> changes = new ArrayList<>();
    if (annotationChanges) {
      metadata.putObject("annotations").put(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION, clusterConfiguration);
      changes.add(KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION);
    }
    if (versionChanges) {
      patch.putObject("spec").put("version", version);
      changes.add("spec.version " + (previous == null ? "(unset)" : previous) + " -> " + version);
    }
    store.patch(CapiResources.MACHINE, machine, patch, UpgradeFailures.MACHINE_NOT_FOUND);
    patches.add(what + " " + String.join(", ", changes));
  }

  private static boolean sameJson(String a, String b) {
    if (a == null || b == null) {
      return a == b;
    }
    try {
      return CapiObjectStore.JSON.readTree(a).equals(CapiObjectStore.JSON.readTree(b));
    } catch (JsonProcessingException e) {
      return false;
    }
  }

  private static String json(Object value) {
    try {
      return CapiObjectStore.JSON.writeValueAsString(value == null ? java.util.Map.of() : value);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a ClusterConfiguration", e);
    }
  }

  private static List<String> fieldNames(ObjectNode node) {
    List<String> names = new ArrayList<>();
    node.fieldNames().forEachRemaining(names::add);
    return names;
  }
}
