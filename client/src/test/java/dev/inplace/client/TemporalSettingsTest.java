package dev.inplace.client;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class TemporalSettingsTest {
  @TempDir Path dir;
  private final List<String> warnings = new ArrayList<>();

  /** An environment with no profile file, so the tests never read the machine's own. */
  private Map<String, String> env(String... pairs) {
    Map<String, String> env = new HashMap<>();
    env.put("TEMPORAL_CONFIG_FILE", dir.resolve("absent.toml").toString());
    for (int i = 0; i < pairs.length; i += 2) {
      env.put(pairs[i], pairs[i + 1]);
    }
    return env;
  }

  @Test
  void theVariablesOfTheTemporalCliGiveAddressNamespaceAndTls() throws Exception {
    Path ca = Files.writeString(dir.resolve("ca.pem"), "x");
    TemporalSettings s = TemporalSettings.fromEnvironment(env(
        "TEMPORAL_ADDRESS", "temporal.example:7233", "TEMPORAL_NAMESPACE", "fleet",
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH", ca.toString(), "TEMPORAL_TLS_SERVER_NAME", "frontend.internal"), warnings::add);

    assertEquals(Optional.of("temporal.example:7233"), s.address());
    assertEquals("fleet", s.namespace());
    assertTrue(s.tls());
    assertTrue(s.toString().contains("server CA " + ca), s.toString());
    assertTrue(s.toString().contains("server name frontend.internal"), s.toString());
    assertEquals(List.of(), warnings);
  }

  @Test
  void theProfileFileIsReadAndTheVariablesOverrideIt() throws Exception {
    Path file = Files.writeString(dir.resolve("temporal.toml"), """
        [profile.default]
        address = "default.example:7233"
        [profile.default.tls]

        [profile.prod]
        address = "prod.example:7233"
        namespace = "prod-ns"
        api_key = "from-file-key"
        """);
    TemporalSettings prod = TemporalSettings.fromEnvironment(
        Map.of("TEMPORAL_CONFIG_FILE", file.toString(), "TEMPORAL_PROFILE", "prod"), warnings::add);
    TemporalSettings overridden = TemporalSettings.fromEnvironment(
        Map.of("TEMPORAL_CONFIG_FILE", file.toString(), "TEMPORAL_PROFILE", "prod", "TEMPORAL_NAMESPACE", "other"),
        warnings::add);
    TemporalSettings byDefault = TemporalSettings.fromEnvironment(Map.of("TEMPORAL_CONFIG_FILE", file.toString()), warnings::add);

    assertEquals(Optional.of("prod.example:7233"), prod.address());
    assertEquals("prod-ns", prod.namespace());
    assertTrue(prod.hasApiKey());
    assertTrue(prod.tls(), "an API key needs TLS");
    assertFalse(prod.toString().contains("from-file-key"), prod.toString());
    assertEquals("other", overridden.namespace());
    assertEquals(Optional.of("default.example:7233"), byDefault.address());
    assertEquals("default", byDefault.namespace());
  }

  @Test
  void aPlaintextConnectionBeyondLoopbackIsRefusedUnlessAllowed() {
    IllegalArgumentException refused = assertThrows(IllegalArgumentException.class,
        () -> TemporalSettings.fromEnvironment(Map.of("TEMPORAL_ADDRESS", "temporal.corp:7233"), warnings::add));
    assertTrue(refused.getMessage().contains("a plaintext connection to temporal.corp:7233 is refused")
        && refused.getMessage().contains(TemporalSettings.ALLOW_PLAINTEXT), refused.getMessage());
    for (String loopback : List.of("127.0.0.1:7233", "localhost:7233", "[::1]:7233", "127.0.0.2:7233")) {
      assertFalse(TemporalSettings.fromEnvironment(Map.of("TEMPORAL_ADDRESS", loopback), warnings::add).tls(), loopback);
    }
    assertFalse(TemporalSettings.fromEnvironment(Map.of("TEMPORAL_ADDRESS", "temporal.corp:7233",
        TemporalSettings.ALLOW_PLAINTEXT, "true"), warnings::add).tls());
    assertTrue(TemporalSettings.fromEnvironment(Map.of("TEMPORAL_ADDRESS", "temporal.corp:7233", "TEMPORAL_TLS", "true"),
        warnings::add).tls());
    assertThrows(IllegalArgumentException.class, () -> TemporalSettings.fromEnvironment(Map.of(
        "TEMPORAL_ADDRESS", "127.0.0.1:7233", TemporalSettings.ALLOW_PLAINTEXT, "yes"), warnings::add));
  }

  @Test
  void anUnknownProfileIsRefusedByName() throws Exception {
    Path file = Files.writeString(dir.resolve("temporal.toml"), "[profile.default]\naddress = \"a:1\"\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TemporalSettings.fromEnvironment(
        Map.of("TEMPORAL_CONFIG_FILE", file.toString(), "TEMPORAL_PROFILE", "staging"), warnings::add));
    assertTrue(e.getMessage().contains("TEMPORAL_PROFILE") && e.getMessage().contains("staging"), e.getMessage());
  }

  @Test
  void aBrokenProfileFileIsReportedWithoutQuotingIt() throws Exception {
    Path file = Files.writeString(dir.resolve("temporal.toml"), "[profile.default\napi_key = \"leaky-key\"\n");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> TemporalSettings.fromEnvironment(Map.of("TEMPORAL_CONFIG_FILE", file.toString()), warnings::add));
    assertTrue(e.getMessage().contains("not valid TOML"), e.getMessage());
    assertFalse(e.getMessage().contains("leaky-key"), e.getMessage());
  }

  @Test
  void theOldCertificateVariablesStillWorkWithADeprecationWarning() throws Exception {
    Path cert = Files.writeString(dir.resolve("c.pem"), "x");
    Path key = Files.writeString(dir.resolve("k.pem"), "x");
    TemporalSettings s = TemporalSettings.fromEnvironment(env(
        "TEMPORAL_ADDRESS", "t:7233", "TEMPORAL_TLS_CERT", cert.toString(), "TEMPORAL_TLS_KEY", key.toString()),
        warnings::add);

    assertTrue(s.tls());
    assertTrue(s.toString().contains("client cert " + cert), s.toString());
    assertEquals(2, warnings.size(), warnings.toString());
    assertTrue(warnings.get(0).contains("TEMPORAL_TLS_CERT is deprecated: set TEMPORAL_TLS_CLIENT_CERT_PATH"), warnings.get(0));
    assertTrue(warnings.get(1).contains("TEMPORAL_TLS_KEY is deprecated: set TEMPORAL_TLS_CLIENT_KEY_PATH"), warnings.get(1));
  }

  @Test
  void everyProblemIsReportedAtOnceNamingVariablesNotContents() throws Exception {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> TemporalSettings.fromEnvironment(env(
        "TEMPORAL_ADDRESS", "no-port", "TEMPORAL_API_KEY", "very-secret",
        "TEMPORAL_TLS_CLIENT_CERT_PATH", "/nonexistent/cert.pem",
        "TEMPORAL_TLS_SERVER_CA_CERT_PATH", "/nonexistent/ca.pem"), warnings::add));

    assertTrue(e.getMessage().contains("TEMPORAL_ADDRESS must be host:port"), e.getMessage());
    assertTrue(e.getMessage().contains("must be set together"), e.getMessage());
    assertTrue(e.getMessage().contains("TEMPORAL_TLS_CLIENT_CERT_PATH: no file /nonexistent/cert.pem"), e.getMessage());
    assertTrue(e.getMessage().contains("TEMPORAL_TLS_SERVER_CA_CERT_PATH: no file /nonexistent/ca.pem"), e.getMessage());
    assertFalse(e.getMessage().contains("very-secret"), e.getMessage());
  }

  @Test
  void anUnreadableKeyIsNamedByPathAndItsContentsNeverShown() throws Exception {
    Path cert = Files.writeString(dir.resolve("c.pem"), "-----BEGIN CERTIFICATE-----\nnot-base64\n-----END CERTIFICATE-----\n");
    Path key = Files.writeString(dir.resolve("k.pem"), "-----BEGIN PRIVATE KEY-----\nTOPSECRETKEYBODY\n-----END PRIVATE KEY-----\n");
    TemporalSettings s = TemporalSettings.fromEnvironment(env("TEMPORAL_ADDRESS", "t:7233",
        "TEMPORAL_TLS_CLIENT_CERT_PATH", cert.toString(), "TEMPORAL_TLS_CLIENT_KEY_PATH", key.toString()), warnings::add);

    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, s::stubsOptions);
    assertTrue(e.getMessage().contains(cert.toString()), e.getMessage());
    assertFalse(e.getMessage().contains("TOPSECRETKEYBODY"), e.getMessage());
  }

  @Test
  void noAddressAnywhereLeavesTheAddressEmpty() {
    assertEquals(Optional.empty(), TemporalSettings.fromEnvironment(env(), warnings::add).address());
  }
}
