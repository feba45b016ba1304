package dev.inplace.worker.watch;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.workflows.failure.CredentialRedactor;
import io.fabric8.kubernetes.client.utils.Serialization;
import java.util.Iterator;
import java.util.Map;

/**
 * A status as it may be stored: every string in it (message, conditions, node and run records,
 * run history, plan) with credentials redacted ({@link CredentialRedactor}). Whatever a run, a
 * refusal or a host said, what lands on the custom resource is read by anyone who may read it.
 */
final class StatusRedaction {
  private StatusRedaction() {}

  /** {@code status} itself when nothing in it needs redacting, otherwise a redacted copy; null stays null. */
  static UpgradeStatus redact(UpgradeStatus status) {
    if (status == null) {
      return null;
    }
    ObjectMapper mapper = Serialization.jsonMapper();
    JsonNode tree = mapper.valueToTree(status);
    if (!redactStrings(tree)) {
      return status;
    }
    try {
      return mapper.treeToValue(tree, UpgradeStatus.class);
    } catch (com.fasterxml.jackson.core.JsonProcessingException e) {
      throw new IllegalStateException("a redacted status does not read back as a status", e);
    }
  }

  /** Redacts the strings under {@code node} in place; whether any changed. */
  private static boolean redactStrings(JsonNode node) {
    boolean changed = false;
    if (node instanceof ObjectNode object) {
      for (Iterator<Map.Entry<String, JsonNode>> fields = object.fields(); fields.hasNext(); ) {
        Map.Entry<String, JsonNode> field = fields.next();
        if (field.getValue().isTextual()) {
          String redacted = CredentialRedactor.redact(field.getValue().asText());
          if (!redacted.equals(field.getValue().asText())) {
            field.setValue(object.textNode(redacted));
            changed = true;
          }
        } else {
          changed |= redactStrings(field.getValue());
        }
      }
    } else if (node instanceof ArrayNode array) {
      for (int i = 0; i < array.size(); i++) {
        if (array.get(i).isTextual()) {
          String redacted = CredentialRedactor.redact(array.get(i).asText());
          if (!redacted.equals(array.get(i).asText())) {
            array.set(i, array.textNode(redacted));
            changed = true;
          }
        } else {
          changed |= redactStrings(array.get(i));
        }
      }
    }
    return changed;
  }
}
