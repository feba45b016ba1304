package dev.inplace.activities.capi;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.Iterator;
import java.util.Map;

/**
 * Builds the JSON merge patch (RFC 7386) that turns one object into another, so a replacement of a
 * whole spec is sent as the few fields that differ and a second run sends nothing. A key whose value
 * is null counts as absent (fabric8's mock server stores the nulls a merge patch sends).
 */
final class MergePatches {
  private MergePatches() {}

  /** The merge patch from {@code from} to {@code to}; empty when they are equal. */
  static ObjectNode diff(JsonNode from, JsonNode to) {
    ObjectNode patch = CapiObjectStore.JSON.createObjectNode();
    if (from != null && from.isObject()) {
      for (Iterator<String> keys = from.fieldNames(); keys.hasNext(); ) {
        String key = keys.next();
        if (!from.get(key).isNull() && absent(to, key)) {
          patch.putNull(key);
        }
      }
    }
    if (to == null || !to.isObject()) {
      return patch;
    }
    for (Iterator<Map.Entry<String, JsonNode>> fields = to.fields(); fields.hasNext(); ) {
      Map.Entry<String, JsonNode> field = fields.next();
      JsonNode wanted = field.getValue();
      if (wanted.isNull()) {
        continue;
      }
      JsonNode current = from == null ? null : from.get(field.getKey());
      if (current == null || current.isNull()) {
        patch.set(field.getKey(), wanted);
      } else if (current.isObject() && wanted.isObject()) {
        ObjectNode nested = diff(current, wanted);
        if (!nested.isEmpty()) {
          patch.set(field.getKey(), nested);
        }
      } else if (!current.equals(wanted)) {
        patch.set(field.getKey(), wanted);
      }
    }
    return patch;
  }

  private static boolean absent(JsonNode object, String key) {
    return object == null || !object.isObject() || object.get(key) == null || object.get(key).isNull();
  }
}
