package dev.inplace.worker.extension;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.cert.Certificate;
import java.time.Duration;
import javax.net.ssl.SSLContext;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * cert-manager renews the extension's certificate (and may roll the CA) by rewriting the mounted
 * files: a live server picks the new set up on the next handshake, without a restart, and keeps the
 * old one while the files are half written.
 */
@Timeout(60)
class ExtensionTlsReloadTest {
  private static final String DISCOVERY = "/hooks.runtime.cluster.x-k8s.io/v1alpha1/discovery";
  @TempDir Path dir;
  private HookServer server;

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  @Test
  void aRotatedCertificateKeyAndClientCaAreServedWithoutARestart() throws Exception {
    TestCertificates before = TestCertificates.create(Files.createDirectories(dir.resolve("before")));
    TestCertificates after = TestCertificates.create(Files.createDirectories(dir.resolve("after")));
    Path live = Files.createDirectories(dir.resolve("live"));
    Path cert = copy(before.serverCert, live.resolve("tls.crt"));
    Path key = copy(before.serverKey, live.resolve("tls.key"));
    Path ca = copy(before.caCert, live.resolve("ca.crt"));
    server = HookServer.start(ExtensionOptions.loopback(cert, key, ca).withReadTimeout(HookServerTest.READ_TIMEOUT),
        r -> answer(), r -> answer(), r -> answer(), r -> answer());

    assertArrayEquals(pem(before.serverCert), presented(before.clientContext(true)));

    // Half written: the new certificate without its key is not a set; the old one is kept.
    copy(after.serverCert, cert);
    assertArrayEquals(pem(before.serverCert), presented(before.clientContext(true)));

    copy(after.serverKey, key);
    copy(after.caCert, ca);
    assertArrayEquals(pem(after.serverCert), presented(after.clientContext(true)));
    // The old client certificate's CA is no longer trusted, and the old server certificate is gone.
    assertThrows(IOException.class, () -> presented(before.clientContext(true)));
    assertThrows(IOException.class, () -> presented(after.clientContext(false)));
  }

  private static ObjectNode answer() {
    return Hooks.response(Hooks.UPDATE_MACHINE, Hooks.SUCCESS, "");
  }

  /** The DER of the leaf certificate the server presented to a client with {@code context}. */
  private byte[] presented(SSLContext context) throws Exception {
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(context)
        .connectTimeout(Duration.ofSeconds(5)).build();
    HttpResponse<String> response = client.send(
        HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + DISCOVERY))
            .POST(HttpRequest.BodyPublishers.ofString(HookServerTest.request("Discovery", ""))).timeout(Duration.ofSeconds(10)).build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(200, response.statusCode());
    Certificate leaf = response.sslSession().orElseThrow().getPeerCertificates()[0];
    return leaf.getEncoded();
  }

  private static byte[] pem(Path file) throws Exception {
    return PemTls.certificates(file).get(0).getEncoded();
  }

  private static Path copy(Path from, Path to) throws IOException {
    return Files.copy(from, to, StandardCopyOption.REPLACE_EXISTING);
  }
}
