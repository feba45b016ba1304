package dev.inplace.activities.host;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * Values for one script template: scalars, and row lists that repeat the template line they appear
 * on once per row (a row's fields become that line's quoted arguments).
 */
final class ScriptValues {
  private final Map<String, String> scalars = new LinkedHashMap<>();
  private final Map<String, List<List<String>>> rows = new LinkedHashMap<>();

  ScriptValues with(String name, String value) {
    requireNew(name);
    if (value == null) {
      throw new IllegalArgumentException("script value '" + name + "' is null");
    }
    scalars.put(name, value);
    return this;
  }

  ScriptValues withRows(String name, List<List<String>> values) {
    requireNew(name);
    for (List<String> row : values) {
      if (row.isEmpty() || row.stream().anyMatch(Objects::isNull)) {
        throw new IllegalArgumentException(
            "script rows '" + name + "' contain an empty row or a null");
      }
    }
    rows.put(name, List.copyOf(values));
    return this;
  }

  Map<String, String> scalars() {
    return scalars;
  }

  Map<String, List<List<String>>> rows() {
    return rows;
  }

  private void requireNew(String name) {
    if (scalars.containsKey(name) || rows.containsKey(name)) {
      throw new IllegalArgumentException("script value '" + name + "' given twice");
    }
  }
}
