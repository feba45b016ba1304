package dev.inplace.activities.capi;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * Reads fields of generic (untyped) resources. A key whose value is null counts as absent: a real
 * API server removes a key merge-patched to null, fabric8's mock server stores the null.
 */
final class ResourceFields {
  private ResourceFields() {}

  /**
   * The value at {@code path} under the object's top level ({@code "spec", "version"}), or null.
   */
  static Object at(GenericKubernetesResource resource, String... path) {
    Object current = resource.getAdditionalProperties();
    for (String key : path) {
      if (!(current instanceof Map<?, ?> map)) {
        return null;
      }
      current = map.get(key);
    }
    return current;
  }

  /** The string at {@code path}, or null when absent or not a string. */
  static String string(GenericKubernetesResource resource, String... path) {
    return at(resource, path) instanceof String text ? text : null;
  }

  /** The number at {@code path} as a long, or {@code fallback}. */
  static long number(GenericKubernetesResource resource, long fallback, String... path) {
    return at(resource, path) instanceof Number n ? n.longValue() : fallback;
  }

  /** The maps of the list at {@code path}, in order; anything else in the list is skipped. */
  static List<Map<?, ?>> maps(GenericKubernetesResource resource, String... path) {
    List<Map<?, ?>> result = new ArrayList<>();
    if (at(resource, path) instanceof List<?> list) {
      for (Object item : list) {
        if (item instanceof Map<?, ?> map) {
          result.add(map);
        }
      }
    }
    return result;
  }

  static String annotation(GenericKubernetesResource resource, String key) {
    ObjectMeta metadata = resource.getMetadata();
    Map<String, String> annotations = metadata == null ? null : metadata.getAnnotations();
    return annotations == null ? null : annotations.get(key);
  }

  static boolean hasAnnotation(GenericKubernetesResource resource, String key) {
    return annotation(resource, key) != null;
  }

  static String label(GenericKubernetesResource resource, String key) {
    ObjectMeta metadata = resource.getMetadata();
    Map<String, String> labels = metadata == null ? null : metadata.getLabels();
    return labels == null ? null : labels.get(key);
  }

  static boolean hasLabel(GenericKubernetesResource resource, String key) {
    return label(resource, key) != null;
  }

  static String name(GenericKubernetesResource resource) {
    return resource.getMetadata().getName();
  }
}
