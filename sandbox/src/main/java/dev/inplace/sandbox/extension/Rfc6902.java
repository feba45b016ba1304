package dev.inplace.sandbox.extension;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.List;

/** Applies an RFC 6902 JSON patch as CAPI does (add, remove, replace, test), independent of the worker's code. */
final class Rfc6902 {
  private Rfc6902() {}

  static JsonNode apply(JsonNode document, JsonNode patch) {
    if (!patch.isArray()) {
      throw new IllegalArgumentException("a JSON patch is an array of operations");
    }
    JsonNode doc = document.deepCopy();
    for (JsonNode op : patch) {
      String kind = op.path("op").asText();
      List<String> path = pointer(op.path("path").asText());
      if (path.isEmpty()) {
        throw new IllegalArgumentException("operations on the document root are not supported");
      }
      JsonNode parent = doc;
      for (String s : path.subList(0, path.size() - 1)) {
        parent = parent.isArray() ? parent.path(Integer.parseInt(s)) : parent.path(s);
      }
      String last = path.get(path.size() - 1);
      switch (kind) {
        case "add" -> add(parent, last, op.get("value"));
        case "remove" -> remove(parent, last);
        case "replace" -> {
          remove(parent, last);
          add(parent, last, op.get("value"));
        }
        case "test" -> {
          JsonNode at = parent.isArray() ? parent.path(Integer.parseInt(last)) : parent.path(last);
          if (!at.equals(op.get("value"))) {
            throw new IllegalArgumentException("test failed at " + op.path("path").asText());
          }
        }
        default -> throw new IllegalArgumentException("unsupported operation " + kind);
      }
    }
    return doc;
  }

  private static void add(JsonNode parent, String key, JsonNode value) {
    if (parent instanceof ObjectNode o) {
      o.set(key, value);
    } else if (parent instanceof ArrayNode a) {
      a.insert(key.equals("-") ? a.size() : Integer.parseInt(key), value);
    } else {
      throw new IllegalArgumentException("path parent missing for " + key);
    }
  }

  private static void remove(JsonNode parent, String key) {
    if (parent instanceof ObjectNode o && o.has(key)) {
      o.remove(key);
    } else if (parent instanceof ArrayNode a) {
      a.remove(Integer.parseInt(key));
    } else {
      throw new IllegalArgumentException("nothing to remove at " + key);
    }
  }

  private static List<String> pointer(String text) {
    List<String> segments = new ArrayList<>();
    if (text.isEmpty()) {
      return segments;
    }
    for (String s : text.substring(1).split("/", -1)) {
      segments.add(s.replace("~1", "/").replace("~0", "~"));
    }
    return segments;
  }
}
