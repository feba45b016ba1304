package dev.inplace.workflows.failure;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class UpgradeFailuresTest {

  private static List<String> types() throws IllegalAccessException {
    List<String> types = new ArrayList<>();
    for (Field f : UpgradeFailures.class.getFields()) {
      if (Modifier.isStatic(f.getModifiers()) && f.getType() == String.class) {
        types.add((String) f.get(null));
      }
    }
    return types;
  }

  @Test
  void everyFailureTypeIsDocumented() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "failure-types.md"));
    for (String type : types()) {
      assertTrue(doc.contains("`" + type + "`"), "docs/failure-types.md does not document " + type);
    }
  }

  @Test
  void transientTypesAreRetriedAndRefusalsAreNot() {
    assertTrue(UpgradeFailures.isRetryable(UpgradeFailures.HOST_UNREACHABLE));
    assertTrue(UpgradeFailures.isRetryable(UpgradeFailures.KUBERNETES_API_ERROR));
    assertFalse(UpgradeFailures.isRetryable(UpgradeFailures.HOST_KEY_MISMATCH));
    assertFalse(UpgradeFailures.isRetryable(UpgradeFailures.UNSUPPORTED_VERSION_SKEW));
  }

  @Test
  void typesAreCamelCaseConditionReasons() throws Exception {
    for (String type : types()) {
      assertTrue(type.matches("[A-Z][A-Za-z]+"), type + " is not a valid condition reason");
    }
  }
}
