package dev.inplace.worker.extension;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.JsonNodeFactory;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * RFC 6902 JSON patches over whole objects, as CAPI applies them: only {@code add}, {@code remove}
 * and {@code replace}, built for a fixed list of paths so an answer is deterministic.
 */
final class JsonPatch {
  private static final JsonNodeFactory NODES = JsonNodeFactory.instance;

  /** One operation; {@code value} is null for {@code remove}. */
  record Op(String op, String path, JsonNode value) {}

  private JsonPatch() {}

  /**
   * The operations that make {@code current} equal {@code target} at each of {@code paths} (JSON
   * pointers; objects only on the way), in path order. A missing parent is added as {@code {}} first.
   */
  static List<Op> between(JsonNode current, JsonNode target, List<String> paths) {
    List<Op> ops = new ArrayList<>();
    Set<String> created = new HashSet<>();
    for (String path : paths.stream().sorted().distinct().toList()) {
      JsonNode from = current.at(path);
      JsonNode to = target.at(path);
      if (from.equals(to)) {
        continue;
      }
      if (to.isMissingNode()) {
        ops.add(new Op("remove", path, null));
      } else if (from.isMissingNode()) {
        List<String> segments = segments(path);
        StringBuilder prefix = new StringBuilder();
        for (int i = 0; i < segments.size() - 1; i++) {
          prefix.append('/').append(escape(segments.get(i)));
          String parent = prefix.toString();
          if (current.at(parent).isMissingNode() && created.add(parent)) {
            ops.add(new Op("add", parent, NODES.objectNode()));
          }
        }
        ops.add(new Op("add", path, to.deepCopy()));
      } else {
        ops.add(new Op("replace", path, to.deepCopy()));
      }
    }
    return ops;
  }

  static ArrayNode toJson(List<Op> ops) {
    ArrayNode array = NODES.arrayNode();
    for (Op op : ops) {
      ObjectNode o = array.addObject();
      o.put("op", op.op());
      o.put("path", op.path());
      if (op.value() != null) {
        o.set("value", op.value());
      }
    }
    return array;
  }

  /** {@code doc} with {@code ops} applied (a copy); add, remove and replace on objects and arrays. */
  static JsonNode apply(JsonNode doc, List<Op> ops) {
    JsonNode result = doc.deepCopy();
    for (Op op : ops) {
      List<String> segments = segments(op.path());
      if (segments.isEmpty()) {
        throw new IllegalArgumentException("patching the whole document is not supported");
      }
      JsonNode parent = result;
      for (String s : segments.subList(0, segments.size() - 1)) {
        parent = parent.isArray() ? parent.path(Integer.parseInt(s)) : parent.path(s);
      }
      String last = segments.get(segments.size() - 1);
      if (parent instanceof ObjectNode object) {
        if (!op.op().equals("add") && !object.has(last)) {
          throw new IllegalArgumentException(op.op() + " of missing " + op.path());
        }
        if (op.op().equals("remove")) {
          object.remove(last);
        } else {
          object.set(last, op.value());
        }
      } else if (parent instanceof ArrayNode array) {
        int index = last.equals("-") ? array.size() : Integer.parseInt(last);
        switch (op.op()) {
          case "add" -> array.insert(index, op.value());
          case "remove" -> array.remove(index);
          default -> array.set(index, op.value());
        }
      } else {
        throw new IllegalArgumentException("no parent for " + op.path());
      }
    }
    return result;
  }

  static List<String> segments(String pointer) {
    List<String> segments = new ArrayList<>();
    if (pointer.isEmpty()) {
      return segments;
    }
    for (String s : pointer.substring(1).split("/", -1)) {
      segments.add(s.replace("~1", "/").replace("~0", "~"));
    }
    return segments;
  }

  private static String escape(String segment) {
    return segment.replace("~", "~0").replace("/", "~1");
  }
}
