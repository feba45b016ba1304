package dev.inplace.activities.artifacts;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.failure.UpgradeFailures;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestOutputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.HexFormat;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The worker's local copy of release artifacts, one file per digest ({@code <cacheDir>/<sha256>}).
 * Each artifact is fetched once, verified, then pushed from here to as many nodes as need it.
 * Fetches of the same digest are serialised; different digests download in parallel.
 */
public final class ArtifactCache {
  private static final Logger log = LoggerFactory.getLogger(ArtifactCache.class);

  private final Path cacheDir;
  private final ArtifactSourcePolicy policy;
  private final HttpClient http;
  private final ConcurrentMap<String, Object> locks = new ConcurrentHashMap<>();

  /** Redirects followed per download, each hop checked against the policy. */
  static final int MAX_REDIRECTS = 5;

  public ArtifactCache(Path cacheDir, ArtifactSourcePolicy policy) {
    // Redirects are followed here, one hop at a time, each checked against the policy: the client
    // follows none of its own.
    this(cacheDir, policy, HttpClient.newBuilder()
        .connectTimeout(Duration.ofSeconds(20))
        .followRedirects(HttpClient.Redirect.NEVER)
        .build());
  }

  /** With the given HTTP client (tests trust their own certificate authority). */
  ArtifactCache(Path cacheDir, ArtifactSourcePolicy policy, HttpClient http) {
    this.cacheDir = cacheDir;
    this.policy = policy;
    this.http = http;
  }

  /**
   * Returns a local file holding the artifact, verified against its sha256.
   *
   * @throws io.temporal.failure.ApplicationFailure {@code ArtifactDigestMismatch} when the source
   *     holds other bytes, {@code ArtifactUnavailable} (retryable) when it cannot be read, {@code
   *     InvalidRequest} when the source breaks the {@link ArtifactSourcePolicy}
   */
  public Path fetch(Artifact artifact) {
    policy.problem(artifact).ifPresent(why -> {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, why);
    });
    if (ArtifactRules.pulledByHost(artifact)) {
      // The host pulls it by digest (kairos-agent upgrade --source oci:...): nothing to cache here.
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST,
          "artifact " + artifact.name() + " is pulled by the host from its registry; the worker does not fetch it");
    }
    Path cached = cacheDir.resolve(artifact.sha256());
    synchronized (locks.computeIfAbsent(artifact.sha256(), k -> new Object())) {
      if (isCached(cached, artifact)) {
        return cached;
      }
      try {
        Files.createDirectories(cacheDir);
        Path tmp = Files.createTempFile(cacheDir, "." + artifact.sha256(), ".part");
        try {
          String actual = copyAndDigest(artifact, tmp);
          if (!actual.equals(artifact.sha256())) {
            // Never the actual digest: it would make the worker a digest oracle on any file it can read.
            throw UpgradeFailures.nonRetryable(
                UpgradeFailures.ARTIFACT_DIGEST_MISMATCH,
                "artifact "
                    + artifact.name()
                    + " does not match its expected sha256 "
                    + artifact.sha256()
                    + (artifact.sizeBytes() > 0 ? " (" + artifact.sizeBytes() + " bytes)" : ""));
          }
          requireDeclaredSize(artifact, Files.size(tmp));
          Files.move(
              tmp, cached, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } finally {
          Files.deleteIfExists(tmp);
        }
      } catch (IOException e) {
        throw new UncheckedIOException("cannot write to artifact cache " + cacheDir, e);
      }
      log.info(
          "artifact {} cached from {} ({} bytes)",
          artifact.name(),
          artifact.source(),
          size(cached));
      return cached;
    }
  }

  /**
   * A cached file was verified before its atomic rename; a size check is enough to notice that it
   * was truncated or replaced since.
   */
  private static boolean isCached(Path cached, Artifact artifact) {
    if (!Files.isRegularFile(cached)) {
      return false;
    }
    long size = size(cached);
    if (artifact.sizeBytes() == 0 || size == artifact.sizeBytes()) {
      return true;
    }
    log.warn(
        "cached {} has {} bytes, expected {}: fetching it again",
        cached,
        size,
        artifact.sizeBytes());
    return false;
  }

  /** The catalogue's size feeds the free-disk preflight; a wrong one is refused, not ignored. */
  private static void requireDeclaredSize(Artifact artifact, long actual) {
    if (artifact.sizeBytes() != 0 && artifact.sizeBytes() != actual) {
      throw UpgradeFailures.nonRetryable(
          UpgradeFailures.INVALID_REQUEST,
          "artifact "
              + artifact.name()
              + " is declared as "
              + artifact.sizeBytes()
              + " bytes but the file with its sha256 has "
              + actual);
    }
  }

  private String copyAndDigest(Artifact artifact, Path target) throws IOException {
    MessageDigest digest = sha256();
    long limit = artifact.sizeBytes() > 0 ? artifact.sizeBytes() : policy.maxBytes();
    try (InputStream in = open(artifact);
        OutputStream out = new DigestOutputStream(Files.newOutputStream(target), digest)) {
      long copied = in.transferTo(new BoundedOutputStream(out, limit));
      log.debug("artifact {}: {} bytes read", artifact.name(), copied);
    } catch (BoundedOutputStream.TooLarge e) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, "artifact " + artifact.name()
          + " is larger than " + (artifact.sizeBytes() > 0 ? "its declared " + limit + " bytes"
              : "the worker's limit of " + limit + " bytes (INPLACE_ARTIFACT_MAX_BYTES)"));
    } catch (IOException e) {
      // What the connection said (refused, reset, timed out) stays in the worker's log: in a run's
      // failure, and so in a resource's status, it would tell a catalogue writer about ports and hosts.
      log.warn("artifact {}: download failed: {}: {}", artifact.name(), e.getClass().getSimpleName(), e.getMessage());
      throw unavailable(artifact, NOT_DELIVERED);
    }
    return HexFormat.of().formatHex(digest.digest());
  }

  private InputStream open(Artifact artifact) throws IOException {
    String source = artifact.source();
    if (source.startsWith("https://")) {
      return openHttp(artifact, URI.create(source));
    }
    Path path = policy.local(artifact).orElseThrow(() -> UpgradeFailures.nonRetryable(
        UpgradeFailures.INVALID_REQUEST, "artifact " + artifact.name() + ": source not allowed"));
    try {
      // A symbolic link in the mirror must not lead out of it.
      Path real = path.toRealPath();
      if (!real.startsWith(policy.mirrorDir().toRealPath())) {
        throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST,
            "artifact " + artifact.name() + ": local source leads out of the mirror directory");
      }
      return Files.newInputStream(real);
    } catch (NoSuchFileException e) {
      throw unavailable(artifact, "no such file");
    }
  }

  /** The one reason a failed download gives outside the worker's log. */
  static final String NOT_DELIVERED = "the source did not deliver it (the worker's log has the details)";

  /**
   * GETs {@code uri}, following up to {@link #MAX_REDIRECTS} redirects, each hop checked against the
   * policy before it is requested. Status codes and locations go to the worker's log only.
   */
  private InputStream openHttp(Artifact artifact, URI uri) throws IOException {
    URI current = uri;
    for (int hop = 0; ; hop++) {
      HttpResponse<InputStream> response;
      try {
        response = http.send(HttpRequest.newBuilder(current).GET().build(), HttpResponse.BodyHandlers.ofInputStream());
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw unavailable(artifact, "interrupted");
      }
      int status = response.statusCode();
      if (status == 200) {
        return response.body();
      }
      response.body().close();
      if (status < 300 || status > 399 || status == 304) {
        log.warn("artifact {}: {} answered HTTP {}", artifact.name(), withoutQuery(current), status);
        throw unavailable(artifact, NOT_DELIVERED);
      }
      if (hop == MAX_REDIRECTS) {
        log.warn("artifact {}: more than {} redirects, the last from {}", artifact.name(), MAX_REDIRECTS, withoutQuery(current));
        throw unavailable(artifact, NOT_DELIVERED);
      }
      String location = response.headers().firstValue("location").orElse("");
      URI next;
      try {
        next = current.resolve(location);
      } catch (IllegalArgumentException e) {
        log.warn("artifact {}: {} redirects to an invalid location", artifact.name(), withoutQuery(current));
        throw unavailable(artifact, NOT_DELIVERED);
      }
      java.util.Optional<String> refused = location.isEmpty()
          ? java.util.Optional.of("artifact " + artifact.name() + ": its source redirects without a location")
          : policy.redirectProblem(artifact, next);
      if (refused.isPresent()) {
        log.warn("artifact {}: redirect from {} to {} refused", artifact.name(), withoutQuery(current), withoutQuery(next));
        throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, refused.get());
      }
      log.debug("artifact {}: redirected to {}", artifact.name(), withoutQuery(next));
      current = next;
    }
  }

  /** A URL for the log: scheme, host, port and path; a redirect's query may carry a signature. */
  private static String withoutQuery(URI uri) {
    return uri.getScheme() + "://" + uri.getHost() + (uri.getPort() < 0 ? "" : ":" + uri.getPort()) + uri.getRawPath();
  }

  private static io.temporal.failure.ApplicationFailure unavailable(Artifact artifact, String why) {
    return UpgradeFailures.retryable(
        UpgradeFailures.ARTIFACT_UNAVAILABLE,
        "cannot fetch artifact " + artifact.name() + " from " + artifact.source() + ": " + why);
  }

  private static long size(Path path) {
    try {
      return Files.size(path);
    } catch (IOException e) {
      return -1;
    }
  }

  private static MessageDigest sha256() {
    try {
      return MessageDigest.getInstance("SHA-256");
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException("SHA-256 is a mandatory JCE algorithm", e);
    }
  }
}
