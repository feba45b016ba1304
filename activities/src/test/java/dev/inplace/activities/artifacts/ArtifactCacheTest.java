package dev.inplace.activities.artifacts;

import static dev.inplace.activities.ssh.FailureAssertions.assertFailure;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.failure.ApplicationFailure;
import java.io.IOException;
import java.io.OutputStream;
import java.util.Set;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class ArtifactCacheTest {
  private static final byte[] CONTENT = "k3s binary bytes".getBytes(StandardCharsets.UTF_8);

  @TempDir Path work;
  private Path cacheDir;
  private Path mirror;
  private ArtifactCache cache;
  private SelfSignedHttps https;
  private com.sun.net.httpserver.HttpsServer http;
  private final AtomicInteger httpRequests = new AtomicInteger();

  @BeforeEach
  void setUp() throws IOException {
    cacheDir = work.resolve("cache");
    mirror = Files.createDirectories(work.resolve("mirror"));
    try {
      https = new SelfSignedHttps();
    } catch (Exception e) {
      throw new IOException(e);
    }
    http = https.server;
    cache = new ArtifactCache(cacheDir,
        new ArtifactSourcePolicy(Set.of("127.0.0.1"), mirror, ArtifactSourcePolicy.DEFAULT_MAX_BYTES), https.client);
    http.createContext(
        "/k3s",
        exchange -> {
          httpRequests.incrementAndGet();
          exchange.sendResponseHeaders(200, CONTENT.length);
          try (OutputStream out = exchange.getResponseBody()) {
            out.write(CONTENT);
          }
        });
    http.createContext(
        "/missing",
        exchange -> {
          exchange.sendResponseHeaders(404, -1);
          exchange.close();
        });
    http.start();
  }

  @AfterEach
  void tearDown() {
    http.stop(0);
  }

  static String sha256(byte[] data) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(data));
  }

  static Artifact artifact(String source, String sha256, long size) {
    return new Artifact(
        "k3s", ArtifactKind.BINARY, source, sha256, size, "/usr/local/bin/k3s", "0755");
  }

  @Test
  void fetchesAnAbsolutePathBelowTheMirrorIntoAFileNamedByDigest() throws Exception {
    Path source = Files.write(mirror.resolve("k3s"), CONTENT);

    Path cached = cache.fetch(artifact(source.toString(), sha256(CONTENT), CONTENT.length));

    assertEquals(cacheDir.resolve(sha256(CONTENT)), cached);
    assertArrayEquals(CONTENT, Files.readAllBytes(cached));
  }

  @Test
  void fetchesAFileUriBelowTheMirror() throws Exception {
    Path source = Files.write(mirror.resolve("k3s"), CONTENT);

    Path cached = cache.fetch(artifact(source.toUri().toString(), sha256(CONTENT), 0));

    assertArrayEquals(CONTENT, Files.readAllBytes(cached));
  }

  @Test
  void downloadsOverHttpsOnceAndReusesTheCachedFile() throws Exception {
    Artifact a = artifact(url("/k3s"), sha256(CONTENT), CONTENT.length);

    cache.fetch(a);
    Path again = cache.fetch(a);

    assertEquals(1, httpRequests.get());
    assertArrayEquals(CONTENT, Files.readAllBytes(again));
  }

  @Test
  void truncatedCacheEntryIsFetchedAgain() throws Exception {
    Artifact a = artifact(url("/k3s"), sha256(CONTENT), CONTENT.length);
    Path cached = cache.fetch(a);
    Files.write(cached, new byte[] {1, 2});

    cache.fetch(a);

    assertEquals(2, httpRequests.get());
    assertArrayEquals(CONTENT, Files.readAllBytes(cached));
  }

  @Test
  void wrongDigestIsRefusedAndNothingIsCached() throws Exception {
    String other = sha256("something else".getBytes(StandardCharsets.UTF_8));

    ApplicationFailure failure =
        assertFailure(
            UpgradeFailures.ARTIFACT_DIGEST_MISMATCH,
            () -> cache.fetch(artifact(url("/k3s"), other, 0)));

    assertEquals(true, failure.isNonRetryable());
    assertEquals("artifact k3s does not match its expected sha256 " + other, failure.getOriginalMessage());
    assertFalse(failure.getOriginalMessage().contains(sha256(CONTENT)), "never the actual digest");
    try (Stream<Path> files = Files.list(cacheDir)) {
      assertEquals(List.of(), files.toList(), "no file, not even a temp file, is left behind");
    }
  }

  @Test
  void missingSourcesAreRetryableUnavailable() throws Exception {
    ApplicationFailure http404 =
        assertFailure(
            UpgradeFailures.ARTIFACT_UNAVAILABLE,
            () -> cache.fetch(artifact(url("/missing"), sha256(CONTENT), 0)));
    assertFalse(http404.isNonRetryable());
    assertFailure(
        UpgradeFailures.ARTIFACT_UNAVAILABLE,
        () -> cache.fetch(artifact(mirror.resolve("nope").toString(), sha256(CONTENT), 0)));
    assertFailure(
        UpgradeFailures.ARTIFACT_UNAVAILABLE,
        () -> cache.fetch(artifact("https://127.0.0.1:1/k3s", sha256(CONTENT), 0)));
  }

  @Test
  void wrongDeclaredSizeIsRefused() throws Exception {
    Path source = Files.write(mirror.resolve("k3s"), CONTENT);

    assertFailure(
        UpgradeFailures.INVALID_REQUEST,
        () -> cache.fetch(artifact(source.toString(), sha256(CONTENT), CONTENT.length + 1)));
  }

  @Test
  void concurrentFetchesOfOneDigestDownloadOnce() throws Exception {
    Artifact a = artifact(url("/k3s"), sha256(CONTENT), CONTENT.length);
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<Path>> results = new ArrayList<>();
      for (int i = 0; i < 8; i++) {
        results.add(pool.submit(() -> cache.fetch(a)));
      }
      for (Future<Path> r : results) {
        assertArrayEquals(CONTENT, Files.readAllBytes(r.get()));
      }
    } finally {
      pool.shutdownNow();
    }
    assertEquals(1, httpRequests.get());
  }

  @Test
  void plainHttpIsRefusedBeforeAnyRequest() throws Exception {
    String plain = url("/k3s").replace("https:", "http:");
    ApplicationFailure failure =
        assertFailure(UpgradeFailures.INVALID_REQUEST, () -> cache.fetch(artifact(plain, sha256(CONTENT), 0)));
    assertEquals(true, failure.getOriginalMessage().contains("source scheme http is not allowed"), failure.getMessage());
    assertEquals(0, httpRequests.get());
  }

  @Test
  void localFilesOutsideTheMirrorAreRefusedUnread() throws Exception {
    Path token = Files.write(work.resolve("token"), "service account token".getBytes(StandardCharsets.UTF_8));
    Files.createSymbolicLink(mirror.resolve("link"), token);
    for (String source : List.of(token.toString(), token.toUri().toString(), mirror + "/../token",
        mirror.resolve("link").toString())) {
      ApplicationFailure failure = assertFailure(UpgradeFailures.INVALID_REQUEST,
          () -> cache.fetch(artifact(source, sha256("x".getBytes(StandardCharsets.UTF_8)), 0)));
      assertFalse(failure.getOriginalMessage().contains(sha256(Files.readAllBytes(token))), source);
    }
    ArtifactCache noMirror = new ArtifactCache(cacheDir, ArtifactSourcePolicy.httpsOnly(), https.client);
    ApplicationFailure none = assertFailure(UpgradeFailures.INVALID_REQUEST,
        () -> noMirror.fetch(artifact(mirror.resolve("k3s").toString(), sha256(CONTENT), 0)));
    assertEquals(true, none.getOriginalMessage().contains("INPLACE_ARTIFACT_MIRROR_DIR"), none.getMessage());
  }

  @Test
  void aHostOutsideTheAllowlistIsRefused() throws Exception {
    ArtifactCache strict = new ArtifactCache(cacheDir,
        new ArtifactSourcePolicy(Set.of("releases.example"), null, ArtifactSourcePolicy.DEFAULT_MAX_BYTES), https.client);
    ApplicationFailure failure = assertFailure(UpgradeFailures.INVALID_REQUEST,
        () -> strict.fetch(artifact(url("/k3s"), sha256(CONTENT), 0)));
    assertEquals(true, failure.getOriginalMessage().contains("host 127.0.0.1 is not in the allowed artifact hosts"),
        failure.getMessage());
    assertEquals(0, httpRequests.get());
  }

  @Test
  void anUndeclaredSizeStopsAtTheCapAndADeclaredOneAboveItIsRefused() throws Exception {
    ArtifactCache capped = new ArtifactCache(cacheDir, new ArtifactSourcePolicy(Set.of("127.0.0.1"), mirror, 8), https.client);
    ApplicationFailure stopped = assertFailure(UpgradeFailures.INVALID_REQUEST,
        () -> capped.fetch(artifact(url("/k3s"), sha256(CONTENT), 0)));
    assertEquals("artifact k3s is larger than the worker's limit of 8 bytes (INPLACE_ARTIFACT_MAX_BYTES)",
        stopped.getOriginalMessage());
    ApplicationFailure declared = assertFailure(UpgradeFailures.INVALID_REQUEST,
        () -> capped.fetch(artifact(url("/k3s"), sha256(CONTENT), CONTENT.length)));
    assertEquals(true, declared.getOriginalMessage().contains("above the worker's limit of 8"), declared.getMessage());
    try (Stream<Path> files = Files.list(cacheDir)) {
      assertEquals(List.of(), files.toList());
    }
  }

  /** A context that answers {@code status} with {@code Location: location}. */
  private void redirect(String path, int status, String location) {
    http.createContext(path, exchange -> {
      httpRequests.incrementAndGet();
      exchange.getResponseHeaders().add("Location", location);
      exchange.sendResponseHeaders(status, -1);
      exchange.close();
    });
  }

  @Test
  void aRedirectWithinTheAllowedHostsIsFollowedHopByHop() throws Exception {
    redirect("/hop1", 302, "/hop2");
    redirect("/hop2", 307, url("/k3s"));
    ArtifactCache allowed = new ArtifactCache(cacheDir,
        new ArtifactSourcePolicy(Set.of("127.0.0.1"), null, ArtifactSourcePolicy.DEFAULT_MAX_BYTES), https.client);
    assertArrayEquals(CONTENT, Files.readAllBytes(allowed.fetch(artifact(url("/hop1"), sha256(CONTENT), 0))));
    assertEquals(3, httpRequests.get());
  }

  @Test
  void aRedirectToAHostOutsideTheAllowlistIsRefusedBeforeItIsRequestedAndNotNamed() throws Exception {
    redirect("/to-metadata", 302, "https://metadata.internal.example:8443/latest/credentials?token=abc");
    ArtifactCache strict = new ArtifactCache(cacheDir,
        new ArtifactSourcePolicy(Set.of("127.0.0.1"), null, ArtifactSourcePolicy.DEFAULT_MAX_BYTES), https.client);
    ApplicationFailure refused = assertFailure(UpgradeFailures.INVALID_REQUEST,
        () -> strict.fetch(artifact(url("/to-metadata"), sha256(CONTENT), 0)));
    assertEquals(true, refused.getOriginalMessage().contains("redirects to a host outside the allowed artifact hosts"),
        refused.getMessage());
    assertFalse(refused.getOriginalMessage().contains("metadata.internal"), "the failure does not echo the location");
    assertFalse(refused.getOriginalMessage().contains("8443"), refused.getMessage());
    assertEquals(1, httpRequests.get(), "only the first URL was requested");
  }

  @Test
  void aRedirectDownToPlainHttpIsRefused() throws Exception {
    redirect("/downgrade", 301, "http://127.0.0.1:" + http.getAddress().getPort() + "/k3s");
    ApplicationFailure refused = assertFailure(UpgradeFailures.INVALID_REQUEST,
        () -> cache.fetch(artifact(url("/downgrade"), sha256(CONTENT), 0)));
    assertEquals(true, refused.getOriginalMessage().contains("not a plain https URL"), refused.getMessage());
  }

  @Test
  void endlessRedirectsStopAfterTheLimit() throws Exception {
    redirect("/loop", 302, "/loop");
    ArtifactCache any = new ArtifactCache(cacheDir, ArtifactSourcePolicy.httpsOnly(), https.client);
    assertFailure(UpgradeFailures.ARTIFACT_UNAVAILABLE, () -> any.fetch(artifact(url("/loop"), sha256(CONTENT), 0)));
    assertEquals(ArtifactCache.MAX_REDIRECTS + 1, httpRequests.get());
  }

  @Test
  void aFailedDownloadSaysNothingTheRemoteServerOrTheConnectionSaid() throws Exception {
    ArtifactCache any = new ArtifactCache(cacheDir, ArtifactSourcePolicy.httpsOnly(), https.client);
    ApplicationFailure notFound = assertFailure(UpgradeFailures.ARTIFACT_UNAVAILABLE,
        () -> any.fetch(artifact(url("/missing"), sha256(CONTENT), 0)));
    ApplicationFailure closedPort = assertFailure(UpgradeFailures.ARTIFACT_UNAVAILABLE,
        () -> any.fetch(artifact("https://127.0.0.1:1/k3s", sha256(CONTENT), 0)));
    for (ApplicationFailure f : List.of(notFound, closedPort)) {
      assertEquals(true, f.getOriginalMessage().endsWith(ArtifactCache.NOT_DELIVERED), f.getMessage());
      assertFalse(f.getOriginalMessage().contains("HTTP"), f.getMessage()); // not "404": the port may contain it
      assertFalse(f.getOriginalMessage().contains("Exception"), f.getMessage());
    }
  }

  private String url(String path) {
    return https.url(path);
  }
}
