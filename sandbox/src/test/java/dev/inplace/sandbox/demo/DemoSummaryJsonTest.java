package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The summary line names the Temporal server and its UI only when the demo ran on the dev server. */
class DemoSummaryJsonTest {
  private final ObjectMapper json = new ObjectMapper();
  private final DemoSummary summary = new DemoSummary(1, 1, 0, 0, 0, "v1.31.2+k3s1", 3.0, 1.0, List.of());

  @Test
  void onTheTestServerTheSummaryHasNoTemporalVersionOrUiUrl() throws Exception {
    JsonNode line = json.readTree(json.writeValueAsString(summary));
    assertFalse(line.has("temporal"), line.toString());
    assertFalse(line.has("uiUrl"), line.toString());
  }

  @Test
  void onTheDevServerTheSummaryGivesItsVersionAndUiUrl() throws Exception {
    JsonNode line = json.readTree(json.writeValueAsString(summary.withTemporal("1.29.1", "http://127.0.0.1:8233")));
    assertEquals("1.29.1", line.get("temporal").asText());
    assertEquals("http://127.0.0.1:8233", line.get("uiUrl").asText());
  }

  @Test
  void aUiThatDidNotAnswerIsLeftOutButTheVersionStays() throws Exception {
    JsonNode line = json.readTree(json.writeValueAsString(summary.withTemporal("1.29.1", null)));
    assertEquals("1.29.1", line.get("temporal").asText());
    assertFalse(line.has("uiUrl"), line.toString());
  }
}
