package dev.inplace.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.client.SearchAttributeRegistration;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerConfigTest {

  @Test
  void anAddressAloneGivesTheDefaultNamespaceAndTaskQueue() {
    WorkerConfig config = WorkerConfig.fromEnvironment(Map.of("TEMPORAL_ADDRESS", "temporal.example:7233", "TEMPORAL_TLS", "true", "TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml"), w -> {});

    assertEquals(java.util.Optional.of("temporal.example:7233"), config.temporal().address());
    assertEquals("default", config.temporal().namespace());
    assertEquals("inplace", config.taskQueue());
  }

  @Test
  void noAddressIsRefusedNamingTheVariable() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> WorkerConfig.fromEnvironment(Map.of("TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml"), w -> {}));

    assertTrue(e.getMessage().contains("TEMPORAL_ADDRESS is not set"), e.getMessage());
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class,
            () ->
                WorkerConfig.fromEnvironment(
                    Map.of(
                        "TEMPORAL_ADDRESS", "no-port",
                        "TEMPORAL_TLS_CERT", "/nonexistent/cert.pem",
                        "KUBECONFIG", "/nonexistent/kubeconfig"),
                    w -> {}));

    assertTrue(e.getMessage().contains("TEMPORAL_ADDRESS must be host:port"), e.getMessage());
    assertTrue(e.getMessage().contains("must be set together"), e.getMessage());
    assertTrue(e.getMessage().contains("KUBECONFIG: no file"), e.getMessage());
  }

  @Test
  void anApiKeyIsNeverPrinted() {
    WorkerConfig config =
        WorkerConfig.fromEnvironment(Map.of("TEMPORAL_ADDRESS", "ns.tmprl.cloud:7233", "TEMPORAL_API_KEY", "s3cr3t-key"), w -> {});

    assertFalse(config.toString().contains("s3cr3t-key"));
  }

  @Test
  void onATemporalCloudAddressTheWorkerOnlyChecksSearchAttributesUnlessToldToRegister() {
    Map<String, String> cloud = Map.of("TEMPORAL_ADDRESS", "fleet.a1b2c.tmprl.cloud:7233", "TEMPORAL_API_KEY", "key",
        "TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml");
    assertEquals(SearchAttributeRegistration.Mode.CHECK, WorkerConfig.fromEnvironment(cloud, w -> {}).searchAttributes());
    Map<String, String> forced = new java.util.HashMap<>(cloud);
    forced.put("INPLACE_TEMPORAL_REGISTER_SEARCH_ATTRIBUTES", "true");
    assertEquals(SearchAttributeRegistration.Mode.REGISTER, WorkerConfig.fromEnvironment(forced, w -> {}).searchAttributes());
    Map<String, String> selfHosted = Map.of("TEMPORAL_ADDRESS", "temporal-frontend.temporal:7233", "TEMPORAL_TLS", "true",
        "TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml");
    assertEquals(SearchAttributeRegistration.Mode.REGISTER, WorkerConfig.fromEnvironment(selfHosted, w -> {}).searchAttributes());
  }

  @Test
  void aRegisterSettingOtherThanAutoTrueOrFalseIsRefusedWithTheOtherProblems() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> WorkerConfig.fromEnvironment(
            Map.of("TEMPORAL_ADDRESS", "no-port", "INPLACE_TEMPORAL_REGISTER_SEARCH_ATTRIBUTES", "sometimes",
                "TEMPORAL_CONFIG_FILE", "/nonexistent/temporal.toml"), w -> {}));
    assertTrue(e.getMessage().contains("TEMPORAL_ADDRESS must be host:port"), e.getMessage());
    assertTrue(e.getMessage().contains(
        "INPLACE_TEMPORAL_REGISTER_SEARCH_ATTRIBUTES must be auto, true or false, got 'sometimes'"), e.getMessage());
  }

  @Test
  void everyKeyIsDocumentedInConfigurationMd() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
    for (String key : WorkerConfig.KEYS) {
      assertTrue(doc.contains("`" + key + "`"), "docs/configuration.md does not document " + key);
    }
  }
}
