package dev.inplace.worker.extension;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.capi.CapiResources;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;

/**
 * GenerateUpgradePlan, for a ClusterClass that names this handler in {@code
 * spec.upgrade.external.generateUpgradePlanExtension}: reads the Cluster's class (its {@code
 * spec.kubernetesVersions}) and answers {@link UpgradePlanner}'s plan, control plane and workers one
 * minor at a time; a plan inplace cannot follow is a Failure naming the fix. Reads one ClusterClass,
 * changes nothing.
 */
final class GenerateUpgradePlanHook {
  private final KubernetesClient management;

  GenerateUpgradePlanHook(KubernetesClient management) {
    this.management = management;
  }

  ObjectNode handle(JsonNode request) {
    JsonNode cluster = request.path("cluster");
    String namespace = required(cluster, "/metadata/namespace", "cluster.metadata.namespace");
    String className = required(cluster, "/spec/topology/classRef/name", "cluster.spec.topology.classRef.name");
    JsonNode classNamespace = cluster.at("/spec/topology/classRef/namespace");
    String ns = classNamespace.isTextual() && !classNamespace.asText().isBlank() ? classNamespace.asText() : namespace;
    String from = required(request, "/fromControlPlaneKubernetesVersion", "fromControlPlaneKubernetesVersion");
    String to = required(request, "/toKubernetesVersion", "toKubernetesVersion");
    String fromWorkers = request.path("fromWorkersKubernetesVersion").asText("");
    GenericKubernetesResource clusterClass =
        management.genericKubernetesResources(CapiResources.CLUSTER_CLASS).inNamespace(ns).withName(className).get();
    if (clusterClass == null) {
      return Hooks.failure(Hooks.GENERATE_UPGRADE_PLAN, "ClusterClass " + ns + "/" + className + " not found");
    }
    UpgradePlanner.Plan plan;
    try {
      plan = UpgradePlanner.plan(from, fromWorkers, to, kubernetesVersions(clusterClass), ns + "/" + className);
    } catch (IllegalArgumentException refused) {
      // CAPI fails the topology reconcile with this message and moves no version.
      return Hooks.failure(Hooks.GENERATE_UPGRADE_PLAN, refused.getMessage());
    }
    ObjectNode response = Hooks.response(Hooks.GENERATE_UPGRADE_PLAN, Hooks.SUCCESS, "");
    steps(response.putArray("controlPlaneUpgrades"), plan.controlPlane());
    steps(response.putArray("workersUpgrades"), plan.workers());
    return response;
  }

  private static List<String> kubernetesVersions(GenericKubernetesResource clusterClass) {
    List<String> versions = new ArrayList<>();
    if (clusterClass.getAdditionalProperties().get("spec") instanceof java.util.Map<?, ?> spec
        && spec.get("kubernetesVersions") instanceof List<?> listed) {
      listed.forEach(v -> versions.add(String.valueOf(v)));
    }
    return versions;
  }

  private static void steps(ArrayNode array, List<String> versions) {
    versions.forEach(v -> array.addObject().put("version", v));
  }

  private static String required(JsonNode object, String pointer, String name) {
    JsonNode value = object.at(pointer);
    if (!value.isTextual() || value.asText().isBlank()) {
      throw new BadRequest(name + " is required");
    }
    return value.asText();
  }
}
