package dev.inplace.activities.capi;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.kube.KubeFailures;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.List;

/**
 * Reads and JSON-merge-patches CAPI objects in the management cluster as generic resources,
 * translating client errors into the failure vocabulary. Strategic merge patch and server-side
 * apply are not used: CRDs do not support the former and the latter would take field ownership.
 */
final class CapiObjectStore {
  static final ObjectMapper JSON = new ObjectMapper();

  private final KubernetesClient client;

  CapiObjectStore(KubernetesClient client) {
    this.client = client;
  }

  /** The object, or null when it does not exist. */
  GenericKubernetesResource get(
      ResourceDefinitionContext type, String namespace, String name, String notFoundType) {
    try {
      return resource(type, namespace, name).get();
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(e, notFoundType, describe(type, namespace, name));
    }
  }

  /** Objects of {@code type} in {@code namespace} carrying {@code label=value}. */
  List<GenericKubernetesResource> list(
      ResourceDefinitionContext type, String namespace, String label, String value) {
    try {
      return client
          .genericKubernetesResources(type)
          .inNamespace(namespace)
          .withLabel(label, value)
          .list()
          .getItems();
    } catch (KubernetesClientException e) {
      // 404 on a list: the CRD is not installed, which no retry fixes.
      throw KubeFailures.translate(
          e,
          UpgradeFailures.INVALID_REQUEST,
          type.getKind() + " objects in namespace " + namespace + " with " + label + "=" + value);
    }
  }

  /**
   * Applies a JSON merge patch to {@code current} (as last read) and returns the object as stored
   * afterwards. The patch body is sent as given: {@code current} only names the object, which
   * spares the client a read before the patch.
   */
  GenericKubernetesResource patch(
      ResourceDefinitionContext type,
      GenericKubernetesResource current,
      ObjectNode patch,
      String notFoundType) {
    String namespace = current.getMetadata().getNamespace();
    String name = current.getMetadata().getName();
    String body;
    try {
      body = JSON.writeValueAsString(patch);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a patch of " + type.getKind(), e);
    }
    try {
      return client
          .genericKubernetesResources(type)
          .inNamespace(namespace)
          .resource(current)
          .patch(PatchContext.of(PatchType.JSON_MERGE), body);
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(e, notFoundType, describe(type, namespace, name));
    }
  }

  private Resource<GenericKubernetesResource> resource(
      ResourceDefinitionContext type, String namespace, String name) {
    return client.genericKubernetesResources(type).inNamespace(namespace).withName(name);
  }

  /** {@code KThreesControlPlane capi-system/c1-cp}, for messages and the patch log. */
  static String describe(ResourceDefinitionContext type, String namespace, String name) {
    return type.getKind() + " " + namespace + "/" + name;
  }
}
