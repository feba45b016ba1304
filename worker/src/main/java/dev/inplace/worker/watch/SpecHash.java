package dev.inplace.worker.watch;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.MapperFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.SerializationFeature;
import com.fasterxml.jackson.databind.json.JsonMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.worker.crd.UpgradeSpec;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;

/**
 * The digest a started run's spec is frozen under: sha256 of the spec's canonical JSON without
 * {@code paused} (the one field that may change after the start).
 */
final class SpecHash {
  private static final ObjectMapper CANONICAL =
      JsonMapper.builder()
          .enable(MapperFeature.SORT_PROPERTIES_ALPHABETICALLY)
          .enable(SerializationFeature.ORDER_MAP_ENTRIES_BY_KEYS)
          .build();

  private SpecHash() {}

  static String of(UpgradeSpec<?> spec) {
    if (spec == null) {
      return "sha256:none";
    }
    ObjectNode tree = CANONICAL.valueToTree(spec);
    tree.remove("paused");
    try {
      byte[] json = CANONICAL.writeValueAsString(CANONICAL.treeToValue(tree, Object.class)).getBytes(StandardCharsets.UTF_8);
      return "sha256:" + HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(json));
    } catch (JsonProcessingException | NoSuchAlgorithmException e) {
      throw new IllegalStateException("cannot hash a spec", e);
    }
  }
}
