package dev.inplace.worker.extension;

import static dev.inplace.worker.extension.CanUpdateContractTest.JSON;
import static dev.inplace.worker.extension.CanUpdateContractTest.fixture;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLSocket;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The extension's HTTPS server over real TLS (a CA, server and client certificates generated here):
 * the calls CAPI makes are answered exactly, and every request CAPI would never make is refused
 * without harm, the server answering normally afterwards.
 */
@Timeout(60)
class HookServerTest {
  private static final String ROOT = "/hooks.runtime.cluster.x-k8s.io/v1alpha1/";

  /** A request of {@code hook} as CAPI's runtime client sends it: apiVersion and kind, then {@code fields}. */
  static String request(String hook, String fields) {
    return "{\"apiVersion\":\"" + Hooks.API_VERSION + "\",\"kind\":\"" + hook + "Request\""
        + (fields.isEmpty() ? "" : "," + fields) + "}";
  }

  private static final String DISCOVERY = request("Discovery", "");
  /**
   * The JDK server's request timeout is per JVM: every test server uses the same. It counts from the
   * connection's accept, TLS handshake included: 2 s was too short for an RSA handshake on a loaded
   * two-core machine (ExtensionTlsReloadTest was cut off mid-handshake), 5 s leaves room.
   */
  static final Duration READ_TIMEOUT = Duration.ofSeconds(5);

  @TempDir Path dir;
  private HookServer server;
  private TestCertificates certs;
  private final AtomicReference<Duration> updateMachineDelay = new AtomicReference<>(Duration.ZERO);
  private final AtomicInteger updateMachineCalls = new AtomicInteger();

  private void start(boolean requireClientCertificates, int maxBodyBytes) throws Exception {
    certs = TestCertificates.create(dir);
    ExtensionOptions options =
        (requireClientCertificates
                ? ExtensionOptions.loopback(certs.serverCert, certs.serverKey, certs.caCert)
                : ExtensionOptions.loopbackUnauthenticated(certs.serverCert, certs.serverKey))
            .withReadTimeout(READ_TIMEOUT)
            .withMaxBodyBytes(maxBodyBytes);
    server = HookServer.start(options, CanUpdateHook::canUpdateMachine, CanUpdateHook::canUpdateMachineSet,
        request -> {
          updateMachineCalls.incrementAndGet();
          sleep(updateMachineDelay.get());
          ObjectNode o = Hooks.response(Hooks.UPDATE_MACHINE, Hooks.SUCCESS, "stub");
          o.put("retryAfterSeconds", 5);
          return o;
        },
        request -> null);
  }

  @AfterEach
  void stop() {
    if (server != null) {
      server.close();
    }
  }

  private HttpResponse<String> post(String path, String body, boolean clientCertificate) throws Exception {
    return post(path, body, certs.clientContext(clientCertificate));
  }

  private HttpResponse<String> post(String path, String body, SSLContext tls) throws Exception {
    HttpClient client = HttpClient.newBuilder()
        .version(HttpClient.Version.HTTP_1_1)
        .sslContext(tls)
        .connectTimeout(Duration.ofSeconds(5))
        .build();
    // Like CAPI's client: POST, JSON body, no Content-Type header.
    HttpRequest request = HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + path))
        .POST(HttpRequest.BodyPublishers.ofString(body))
        .timeout(Duration.ofSeconds(20))
        .build();
    return client.send(request, HttpResponse.BodyHandlers.ofString());
  }

  private HttpResponse<String> post(String path, String body) throws Exception {
    return post(path, body, false);
  }

  private static JsonNode json(HttpResponse<String> response) throws Exception {
    assertEquals(200, response.statusCode(), response.body());
    return JSON.readTree(response.body());
  }

  @Test
  void discoveryBehindAPathPrefixWithATimeoutDeclaresEveryHandler() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    HttpResponse<String> response =
        post("/inplace" + ROOT + "discovery?timeout=10s", fixture("discovery-request.json").toString());

    assertEquals(fixture("discovery-response.json"), json(response));
    assertEquals("application/json", response.headers().firstValue("Content-Type").orElse(""));
  }

  @Test
  void eachHookAnswersOnItsHandlerPath() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    JsonNode machine = fixture("can-update-machine-accept.json");
    assertEquals(machine.get("response"),
        json(post(ROOT + "canupdatemachine/can-update-machine?timeout=10s", machine.get("request").toString())));
    JsonNode set = fixture("can-update-machineset-accept.json");
    assertEquals(set.get("response"),
        json(post(ROOT + "canupdatemachineset/can-update-machineset", set.get("request").toString())));
    JsonNode update = json(post(ROOT + "updatemachine/update-machine", fixture("update-machine-request.json").toString()));
    assertEquals("UpdateMachineResponse", update.get("kind").asText());
    assertEquals(5, update.get("retryAfterSeconds").asInt());
  }

  @Test
  void answeredCallsCountEachHookByTheStatusItAnsweredAndLeaveRefusedRequestsOut() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    post(ROOT + "discovery", DISCOVERY);
    post(ROOT + "updatemachine/update-machine", fixture("update-machine-request.json").toString());
    post(ROOT + "updatemachine/update-machine", fixture("update-machine-request.json").toString());
    post(ROOT + "canupdatemachine/can-update-machine", "{not json");
    post(ROOT + "beforeclusterupgrade/before-cluster-upgrade", "{}");

    assertEquals(java.util.Map.of("Discovery/Success", 1L, "UpdateMachine/Success", 2L, "CanUpdateMachine/Failure", 1L),
        server.answeredCalls());
  }

  @Test
  void aClientWithoutACertificateIsRefusedWhenTheCaIsConfigured() throws Exception {
    start(true, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    assertThrows(IOException.class, () -> post(ROOT + "discovery", DISCOVERY, false));
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY, true)).get("kind").asText());
  }

  @Test
  void aCertificateTheClientCaSignedForAnotherCallerIsRefusedUnlessItsNameIsListed() throws Exception {
    start(true, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    SSLContext stranger = certs.clientContextAs("CN=tenant-app");
    assertThrows(IOException.class, () -> post(ROOT + "discovery", DISCOVERY, stranger));
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY, true)).get("kind").asText());
    SSLContext controlPlane = certs.clientContextAs("CN=capi-kubeadm-control-plane-controller-manager");
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY, controlPlane)).get("kind").asText());

    server.close();
    server = HookServer.start(
        ExtensionOptions.loopback(certs.serverCert, certs.serverKey, certs.caCert).withClientNames(List.of("tenant-app")),
        CanUpdateHook::canUpdateMachine, CanUpdateHook::canUpdateMachineSet, request -> null, request -> null);
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY, stranger)).get("kind").asText());
    assertThrows(IOException.class, () -> post(ROOT + "discovery", DISCOVERY, true), "the default names are replaced");
  }

  /**
   * deploy/extension (issue 34, H5): each CAPI manager's namespace has its own CA (a namespaced
   * Issuer), and the worker's client CA file is the bundle of those CAs. Both managers' certificates
   * call; a certificate the serving CA signed is refused even for a listed name, since that CA signs
   * in the worker's namespace, not the managers'.
   */
  @Test
  void withTheManagersNamespaceCasAsClientCasEachManagerCallsAndTheServingCaSignsNoClient() throws Exception {
    certs = TestCertificates.create(dir);
    TestCertificates.Ca core = TestCertificates.Ca.create("CN=inplace-extension-client-ca.capi-system");
    TestCertificates.Ca kcp = TestCertificates.Ca.create("CN=inplace-extension-client-ca.capi-kubeadm-control-plane-system");
    Path clientCas = Files.writeString(dir.resolve("client-cas.pem"), core.pem() + kcp.pem());
    server = HookServer.start(ExtensionOptions.loopback(certs.serverCert, certs.serverKey, clientCas)
            .withReadTimeout(READ_TIMEOUT),
        CanUpdateHook::canUpdateMachine, CanUpdateHook::canUpdateMachineSet, request -> null, request -> null);

    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY,
        certs.clientContextSignedBy(core, "CN=capi-controller-manager"))).get("kind").asText());
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY,
        certs.clientContextSignedBy(kcp, "CN=capi-kubeadm-control-plane-controller-manager"))).get("kind").asText());
    assertThrows(IOException.class, () -> post(ROOT + "discovery", DISCOVERY, true),
        "capi-controller-manager signed by the serving CA");
    assertThrows(IOException.class, () -> post(ROOT + "discovery", DISCOVERY,
        certs.clientContextSignedBy(TestCertificates.Ca.create("CN=tenant CA"), "CN=capi-controller-manager")),
        "capi-controller-manager signed by a CA of another namespace");
  }

  @Test
  void theWrongMethodIs405AndAnUnknownHookOrHandlerIs404() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    HttpClient client = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).sslContext(certs.clientContext(false)).build();
    HttpResponse<String> get = client.send(
        HttpRequest.newBuilder(URI.create("https://localhost:" + server.port() + ROOT + "discovery")).GET().build(),
        HttpResponse.BodyHandlers.ofString());
    assertEquals(405, get.statusCode());
    assertEquals("POST", get.headers().firstValue("Allow").orElse(""));
    assertEquals(404, post(ROOT + "beforeclusterupgrade/before-cluster-upgrade", "{}").statusCode());
    assertEquals(404, post(ROOT + "updatemachine/someone-elses-handler", "{}").statusCode());
    assertEquals(404, post("/healthz", "{}").statusCode());
  }

  @Test
  void malformedOrHostileJsonIsAnsweredWithAFailure() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    String path = ROOT + "canupdatemachine/can-update-machine";
    assertFailure(post(path, "{not json"), "request body is not valid JSON");
    assertFailure(post(path, "[1,2,3]"), "must be a JSON object");
    assertFailure(post(path, "[".repeat(5000) + "]".repeat(5000)), "not valid JSON");
    assertFailure(post(path, "{\"kind\":\"CanUpdateMachineRequest\",\"kind\":\"x\"}"), "not valid JSON");
    assertFailure(post(path, "{\"kind\":\"UpdateMachineRequest\"}"), "expected kind CanUpdateMachineRequest");
    assertFailure(post(path, "{\"kind\":\"CanUpdateMachineRequest\",\"apiVersion\":\"hooks.runtime.cluster.x-k8s.io/v1\"}"),
        "expected apiVersion");
    assertFailure(post(path, request("CanUpdateMachine", "")), "current.machine is required");
    assertFailure(post(ROOT + "canupdatemachineset/can-update-machineset",
        request("CanUpdateMachineSet", "\"current\":{\"machineSet\":{}}")), "desired.machineSet is required");
    assertFailure(post(path, request("CanUpdateMachine", "\"settings\":[\"x\"],\"current\":{\"machine\":{}},\"desired\":{\"machine\":{}}")),
        "settings must be an object");
    // Still serving.
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY)).get("kind").asText());
  }

  @Test
  void aRequestWithoutCapisKindAndApiVersionIsRefusedBeforeAnyHandlerReadsIt() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    String update = ROOT + "updatemachine/update-machine";
    String body = fixture("update-machine-request.json").toString();
    assertTrue(body.contains("\"kind\":\"UpdateMachineRequest\""), body);

    assertFailure(post(ROOT + "discovery", ""), "expected kind DiscoveryRequest, got none");
    assertFailure(post(ROOT + "discovery", "{}"), "expected kind DiscoveryRequest, got none");
    assertFailure(post(update, body.replace("\"kind\":\"UpdateMachineRequest\",", "")),
        "expected kind UpdateMachineRequest, got none");
    assertFailure(post(update, body.replace("\"apiVersion\":\"" + Hooks.API_VERSION + "\",", "")),
        "expected apiVersion " + Hooks.API_VERSION + ", got none");
    assertEquals(0, updateMachineCalls.get(), "no handler ran");
    assertEquals("UpdateMachineResponse", json(post(update, body)).get("kind").asText());
    assertEquals(1, updateMachineCalls.get());
  }

  @Test
  void aBodyOverTheLimitIs413WhetherDeclaredOrChunked() throws Exception {
    start(false, 4096);
    assertEquals(413, post(ROOT + "discovery", "x".repeat(5000)).statusCode());
    try (SSLSocket socket = socket(certs.clientContext(false))) {
      OutputStream out = socket.getOutputStream();
      out.write(("POST " + ROOT + "discovery HTTP/1.1\r\nHost: localhost\r\nTransfer-Encoding: chunked\r\n\r\n")
          .getBytes(StandardCharsets.US_ASCII));
      for (int i = 0; i < 3; i++) {
        out.write(("800\r\n" + "y".repeat(0x800) + "\r\n").getBytes(StandardCharsets.US_ASCII));
      }
      out.write("0\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
      out.flush();
      assertTrue(statusLine(socket.getInputStream()).startsWith("HTTP/1.1 413"));
    }
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY)).get("kind").asText());
  }

  @Test
  void aSenderThatStallsMidBodyIsCutOffByTheReadTimeout() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    long started = System.nanoTime();
    try (SSLSocket socket = socket(certs.clientContext(false))) {
      socket.setSoTimeout(15_000);
      socket.getOutputStream().write(("POST " + ROOT + "discovery HTTP/1.1\r\nHost: localhost\r\nContent-Length: 100\r\n\r\n{\"ki")
          .getBytes(StandardCharsets.US_ASCII));
      socket.getOutputStream().flush();
      int read;
      try {
        read = socket.getInputStream().read();
      } catch (IOException e) {
        read = -1;
      }
      assertEquals(-1, read, "the server must close the connection, not answer");
    }
    Duration took = Duration.ofNanos(System.nanoTime() - started);
    assertTrue(took.compareTo(READ_TIMEOUT.plusSeconds(4)) < 0, "closed after " + took);
    assertEquals("DiscoveryResponse", json(post(ROOT + "discovery", DISCOVERY)).get("kind").asText());
  }

  @Test
  void aHandlerSlowerThanTheCallersTimeoutIsAnsweredWithAFailureInTime() throws Exception {
    start(false, ExtensionOptions.DEFAULT_MAX_BODY_BYTES);
    updateMachineDelay.set(Duration.ofSeconds(6));
    long started = System.nanoTime();
    JsonNode answer = json(post(ROOT + "updatemachine/update-machine?timeout=2s", request("UpdateMachine", "")));
    Duration took = Duration.ofNanos(System.nanoTime() - started);

    assertEquals("Failure", answer.get("status").asText());
    assertEquals(0, answer.get("retryAfterSeconds").asInt());
    assertTrue(answer.get("message").asText().startsWith("no answer within"), answer.toString());
    assertTrue(took.compareTo(Duration.ofSeconds(2)) < 0, "answered after " + took);
  }

  @Test
  void theCallersTimeoutIsReadAsAGoDuration() {
    assertEquals(Duration.ofMillis(9500), HookServer.budget("timeout=10s"));
    assertEquals(Duration.ofMillis(29_500), HookServer.budget("timeout=30s"));
    assertEquals(Duration.ofSeconds(30), HookServer.budget("timeout=1m30s"));
    assertEquals(Duration.ofMillis(1000), HookServer.budget("x=1&timeout=1500ms"));
    assertEquals(Duration.ofMillis(9500), HookServer.budget("timeout=soon"));
    assertEquals(Duration.ofMillis(9500), HookServer.budget(null));
  }

  private static void assertFailure(HttpResponse<String> response, String mentions) throws Exception {
    JsonNode answer = json(response);
    assertEquals("Failure", answer.get("status").asText(), answer.toString());
    assertTrue(answer.get("message").asText().contains(mentions), answer.toString());
    assertTrue(answer.get("kind").asText().endsWith("Response"), answer.toString());
  }

  private SSLSocket socket(SSLContext context) throws IOException {
    SSLSocket socket = (SSLSocket) context.getSocketFactory().createSocket("localhost", server.port());
    socket.setSoTimeout(15_000);
    socket.startHandshake();
    return socket;
  }

  private static String statusLine(InputStream in) throws IOException {
    StringBuilder line = new StringBuilder();
    int c;
    while ((c = in.read()) != -1 && c != '\n') {
      line.append((char) c);
    }
    return line.toString().trim();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
