package dev.inplace.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.SearchAttributes;
import io.temporal.common.SearchAttributeKey;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;

class TemporalConnectionTest {

  @Test
  void theEmbeddedServerStartsWithEveryInplaceSearchAttributeRegistered() {
    try (TemporalConnection temporal = TemporalConnection.open(WorkerConfig.embedded(Path.of("unused")))) {
      assertTrue(temporal.isEmbedded());
      // Registering again finds them all present: nothing left to add.
      assertEquals(List.of(), SearchAttributeRegistration.ensure(temporal.service(), "default"));
    }
  }

  @Test
  void everyAttributeIsAKeywordOrKeywordList() {
    for (SearchAttributeKey<?> key : SearchAttributes.ALL) {
      assertTrue(SearchAttributeRegistration.wanted().containsKey(key.getName()), key.getName());
    }
  }
}
