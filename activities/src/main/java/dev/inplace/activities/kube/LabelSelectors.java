package dev.inplace.activities.kube;

import io.fabric8.kubernetes.api.model.LabelSelector;
import io.fabric8.kubernetes.api.model.LabelSelectorRequirement;
import java.util.List;
import java.util.Map;

/** Label selector matching as the API server does it (policy/v1 semantics for PDBs). */
public final class LabelSelectors {
  private LabelSelectors() {}

  /**
   * Whether {@code selector} selects an object with {@code labels}. A null selector selects nothing;
   * an empty one (no labels, no expressions) selects everything, as for a policy/v1 PDB.
   */
  public static boolean matches(LabelSelector selector, Map<String, String> labels) {
    if (selector == null) {
      return false;
    }
    Map<String, String> actual = labels == null ? Map.of() : labels;
    if (selector.getMatchLabels() != null) {
      for (Map.Entry<String, String> wanted : selector.getMatchLabels().entrySet()) {
        if (!wanted.getValue().equals(actual.get(wanted.getKey()))) {
          return false;
        }
      }
    }
    if (selector.getMatchExpressions() != null) {
      for (LabelSelectorRequirement requirement : selector.getMatchExpressions()) {
        if (!matches(requirement, actual)) {
          return false;
        }
      }
    }
    return true;
  }

  private static boolean matches(LabelSelectorRequirement requirement, Map<String, String> labels) {
    String value = labels.get(requirement.getKey());
    List<String> values = requirement.getValues() == null ? List.of() : requirement.getValues();
    return switch (requirement.getOperator()) {
      case "In" -> value != null && values.contains(value);
      case "NotIn" -> value == null || !values.contains(value);
      case "Exists" -> labels.containsKey(requirement.getKey());
      case "DoesNotExist" -> !labels.containsKey(requirement.getKey());
      default -> false;
    };
  }
}
