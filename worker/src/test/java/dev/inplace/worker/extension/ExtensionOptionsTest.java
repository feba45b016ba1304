package dev.inplace.worker.extension;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ExtensionOptionsTest {
  @TempDir Path dir;

  /** The extension on, with the test certificate and key and nothing else (a mutable map). */
  private static Map<String, String> enabled(TestCertificates certs) {
    return new java.util.HashMap<>(Map.of(
        "INPLACE_EXTENSION", "true",
        "INPLACE_EXTENSION_TLS_CERT", certs.serverCert.toString(),
        "INPLACE_EXTENSION_TLS_KEY", certs.serverKey.toString()));
  }

  @Test
  void offUnlessEnabled() {
    assertTrue(ExtensionOptions.fromEnvironment(Map.of()).isEmpty());
    assertTrue(ExtensionOptions.fromEnvironment(Map.of("INPLACE_EXTENSION", "false")).isEmpty());
  }

  @Test
  void enabledWithCertificateKeyAndClientCaTakesTheDefaults() throws Exception {
    TestCertificates certs = TestCertificates.create(dir);
    ExtensionOptions options = ExtensionOptions.fromEnvironment(Map.of(
        "INPLACE_EXTENSION", "true",
        "INPLACE_EXTENSION_TLS_CERT", certs.serverCert.toString(),
        "INPLACE_EXTENSION_TLS_KEY", certs.serverKey.toString(),
        "INPLACE_EXTENSION_CLIENT_CA", certs.caCert.toString())).orElseThrow();
    assertEquals(9443, options.port());
    assertEquals("0.0.0.0", options.bindAddress());
    assertEquals(1 << 20, options.maxBodyBytes());
    assertEquals(Optional.of(certs.caCert), options.clientCa());
    assertFalse(options.allowUnauthenticated());
    assertEquals(java.util.List.of("capi-controller-manager", "capi-kubeadm-control-plane-controller-manager"),
        options.clientNames());
  }

  @Test
  void theCallersNamesAreAListOfWordsAndABadOneIsNamed() throws Exception {
    TestCertificates certs = TestCertificates.create(dir);
    Map<String, String> env = enabled(certs);
    env.put("INPLACE_EXTENSION_CLIENT_CA", certs.caCert.toString());
    env.put("INPLACE_EXTENSION_CLIENT_NAMES", " capi-controller-manager, capi-k3s-control-plane-controller-manager ,");
    assertEquals(java.util.List.of("capi-controller-manager", "capi-k3s-control-plane-controller-manager"),
        ExtensionOptions.fromEnvironment(env).orElseThrow().clientNames());
    env.put("INPLACE_EXTENSION_CLIENT_NAMES", "capi-controller-manager, two words");
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ExtensionOptions.fromEnvironment(env));
    assertTrue(e.getMessage().contains("INPLACE_EXTENSION_CLIENT_NAMES: a client certificate name must be one word,"
        + " got 'two words'"), e.getMessage());
  }

  @Test
  void withoutAClientCaTheExtensionRefusesToStartUnlessExplicitlyAllowed() throws Exception {
    TestCertificates certs = TestCertificates.create(dir);
    Map<String, String> env = enabled(certs);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ExtensionOptions.fromEnvironment(env));
    assertTrue(e.getMessage().contains("INPLACE_EXTENSION_CLIENT_CA is required"), e.getMessage());
    env.put("INPLACE_EXTENSION_ALLOW_UNAUTHENTICATED", "yes");
    assertThrows(IllegalArgumentException.class, () -> ExtensionOptions.fromEnvironment(env));
    env.put("INPLACE_EXTENSION_ALLOW_UNAUTHENTICATED", "true");
    ExtensionOptions open = ExtensionOptions.fromEnvironment(env).orElseThrow();
    assertTrue(open.allowUnauthenticated());
    assertEquals(Optional.empty(), open.clientCa());
    assertThrows(IllegalArgumentException.class, () -> new ExtensionOptions("127.0.0.1", 0, certs.serverCert,
        certs.serverKey, Optional.empty(), ClientNames.DEFAULTS, 1 << 20, java.time.Duration.ofSeconds(5), 1, false));
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> ExtensionOptions.fromEnvironment(Map.of(
        "INPLACE_EXTENSION", "true",
        "INPLACE_EXTENSION_CLIENT_CA", "/nonexistent/ca.crt",
        "INPLACE_EXTENSION_PORT", "70000",
        "INPLACE_EXTENSION_THREADS", "many")));
    assertTrue(e.getMessage().contains("INPLACE_EXTENSION_TLS_CERT and INPLACE_EXTENSION_TLS_KEY are required"), e.getMessage());
    assertTrue(e.getMessage().contains("INPLACE_EXTENSION_CLIENT_CA: no file"), e.getMessage());
    assertTrue(e.getMessage().contains("INPLACE_EXTENSION_PORT must be"), e.getMessage());
    assertTrue(e.getMessage().contains("INPLACE_EXTENSION_THREADS must be"), e.getMessage());
  }

  @Test
  void everyKeyIsDocumentedInConfigurationMd() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "configuration.md"));
    for (String key : ExtensionOptions.KEYS) {
      assertTrue(doc.contains("`" + key + "`"), "docs/configuration.md does not document " + key);
    }
  }

  @Test
  void everySettingIsDocumentedInCapiExtensionMd() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "capi-extension.md"));
    for (String key : HookSettings.KEYS) {
      assertTrue(doc.contains("`" + key + "`"), "docs/capi-extension.md does not document setting " + key);
    }
  }

  @Test
  void certManagersTraditionalKeyEncodingsAreRead() throws Exception {
    for (String algorithm : new String[] {"RSA", "EC"}) {
      Path sub = Files.createDirectories(dir.resolve(algorithm));
      TestCertificates certs = TestCertificates.create(sub, algorithm);
      Path traditional = Files.writeString(sub.resolve("traditional.key"), certs.traditionalServerKey());
      assertEquals(secret(PemTls.privateKey(certs.serverKey)), secret(PemTls.privateKey(traditional)), algorithm);
      SSLContext context = PemTls.serverContext(certs.serverCert, traditional, Optional.of(certs.caCert));
      assertEquals("TLS", context.getProtocol());
    }
  }

  private static java.math.BigInteger secret(java.security.PrivateKey key) {
    return key instanceof java.security.interfaces.RSAPrivateKey rsa
        ? rsa.getPrivateExponent()
        : ((java.security.interfaces.ECPrivateKey) key).getS();
  }

  @Test
  void aFileWithoutAKeyIsNamedInTheError() throws Exception {
    TestCertificates certs = TestCertificates.create(dir);
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> PemTls.privateKey(certs.serverCert));
    assertTrue(e.getMessage().contains(certs.serverCert.toString()), e.getMessage());
  }
}
