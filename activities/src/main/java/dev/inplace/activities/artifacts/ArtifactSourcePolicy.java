package dev.inplace.activities.artifacts;

import dev.inplace.workflows.api.ArtifactRules;

import dev.inplace.workflows.api.Artifact;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Where the worker may fetch artifacts from, and how much: https only, to {@code allowedHosts} (every
 * redirect hop included; {@value #ANY_HOST} allows any host), local files only below {@code
 * mirrorDir} (an air-gapped mirror mounted into the pod; none when it is null), and at most {@code
 * maxBytes} per artifact (a declared size above it is refused; an undeclared size stops the download
 * there). Applied by the intake and by {@link ArtifactCache} before it reads a byte, so the worker's
 * own files (its service-account token, its config) can never be staged onto a node.
 */
public record ArtifactSourcePolicy(Set<String> allowedHosts, Path mirrorDir, long maxBytes) {
  /** 2 GiB: bigger than any k3s or Kubernetes release file. */
  public static final long DEFAULT_MAX_BYTES = 2L << 30;
  /** In {@code allowedHosts}: any https host (the explicit opt-out of the allowlist). */
  public static final String ANY_HOST = "*";
  /** The allowlist when none is configured: {@link ArtifactRules#RELEASE_HOSTS}. */
  public static final Set<String> RELEASE_HOSTS = ArtifactRules.RELEASE_HOSTS;

  public ArtifactSourcePolicy {
    allowedHosts = allowedHosts == null ? Set.of()
        : allowedHosts.stream().map(h -> h.trim().toLowerCase(Locale.ROOT)).filter(h -> !h.isEmpty())
            .collect(Collectors.toUnmodifiableSet());
    mirrorDir = mirrorDir == null ? null : mirrorDir.toAbsolutePath().normalize();
    if (maxBytes <= 0) {
      throw new IllegalArgumentException("maximum artifact size must be > 0, got " + maxBytes);
    }
  }

  /** https to any host, no local files, 2 GiB (tests). */
  public static ArtifactSourcePolicy httpsOnly() {
    return new ArtifactSourcePolicy(Set.of(ANY_HOST), null, DEFAULT_MAX_BYTES);
  }

  /** Local files below {@code mirrorDir}, https to the {@link #RELEASE_HOSTS}, 2 GiB. */
  public static ArtifactSourcePolicy mirror(Path mirrorDir) {
    return new ArtifactSourcePolicy(RELEASE_HOSTS, mirrorDir, DEFAULT_MAX_BYTES);
  }

  /** Whether artifacts may come from {@code host} (lower case), first URL or redirect hop. */
  public boolean hostAllowed(String host) {
    return allowedHosts.contains(ANY_HOST) || allowedHosts.contains(host);
  }

  /**
   * Why a redirect to {@code next} may not be followed, if it may not: https only, no user info, an
   * allowed host. The answer names no part of the location (the remote server chose it).
   */
  public Optional<String> redirectProblem(Artifact artifact, URI next) {
    if (!"https".equalsIgnoreCase(next.getScheme()) || next.getHost() == null || next.getRawUserInfo() != null) {
      return Optional.of("artifact " + artifact.name() + ": its source redirects to a location that is not a plain https URL");
    }
    if (!hostAllowed(next.getHost().toLowerCase(Locale.ROOT))) {
      return Optional.of("artifact " + artifact.name() + ": its source redirects to a host outside the allowed artifact hosts"
          + " (the worker's log names it; add it to INPLACE_ARTIFACT_HOSTS if you trust it)");
    }
    return Optional.empty();
  }

  /** Why this artifact may not be fetched, if it may not. Reads nothing. */
  public Optional<String> problem(Artifact artifact) {
    if (artifact.sizeBytes() > maxBytes) {
      return Optional.of("artifact " + artifact.name() + " declares " + artifact.sizeBytes()
          + " bytes, above the worker's limit of " + maxBytes + " (INPLACE_ARTIFACT_MAX_BYTES)");
    }
    String source = artifact.source();
    String lower = source.toLowerCase(Locale.ROOT);
    if (ArtifactRules.pulledByHost(artifact)) {
      return registry(artifact);
    }
    if (lower.startsWith("https://")) {
      return https(artifact, source);
    }
    if (lower.startsWith("file:") || source.startsWith("/")) {
      return local(artifact).isPresent() ? Optional.empty()
          : Optional.of("artifact " + artifact.name() + ": local source " + source + " is not allowed; "
              + (mirrorDir == null ? "this worker has no mirror directory (INPLACE_ARTIFACT_MIRROR_DIR)"
                  : "local files must lie below the mirror directory " + mirrorDir));
    }
    String scheme = source.contains(":") ? source.substring(0, source.indexOf(':')) : "(none)";
    return Optional.of("artifact " + artifact.name() + ": source scheme " + scheme
        + " is not allowed; use https:// or a file: below the mirror directory");
  }

  /** The local file an allowed {@code file:} or absolute-path source names, else empty. */
  Optional<Path> local(Artifact artifact) {
    if (mirrorDir == null) {
      return Optional.empty();
    }
    Path path;
    try {
      String source = artifact.source();
      path = source.startsWith("/") ? Path.of(source) : Path.of(new URI(source));
    } catch (URISyntaxException | IllegalArgumentException e) {
      return Optional.empty();
    }
    Path normal = path.toAbsolutePath().normalize();
    if (!normal.startsWith(mirrorDir) || normal.equals(mirrorDir) || !normal.equals(path)) {
      return Optional.empty();
    }
    return Optional.of(normal);
  }

  /**
   * An OS image the host pulls from a registry (Kairos): the form and the digest pin are {@link
   * ArtifactRules}'; the registry host must be in the same allowlist as https hosts.
   */
  private Optional<String> registry(Artifact artifact) {
    Optional<String> host = ArtifactRules.registryHost(artifact);
    if (host.isEmpty()) {
      return Optional.of("artifact " + artifact.name() + ": an oci: source must be oci:HOST/REPO[:TAG]@sha256:<64 hex>");
    }
    String name = host.get().replaceFirst(":[0-9]+$", "");
    if (!hostAllowed(name)) {
      return Optional.of("artifact " + artifact.name() + ": registry " + name + " is not in the allowed artifact hosts "
          + List.copyOf(allowedHosts.stream().sorted().toList()) + " (INPLACE_ARTIFACT_HOSTS)");
    }
    return Optional.empty();
  }

  private Optional<String> https(Artifact artifact, String source) {
    URI uri;
    try {
      uri = new URI(source);
    } catch (URISyntaxException e) {
      return Optional.of("artifact " + artifact.name() + ": source is not a valid URL: " + e.getReason());
    }
    if (uri.getHost() == null || uri.getRawUserInfo() != null) {
      return Optional.of("artifact " + artifact.name() + ": source URL must name a host and carry no user info");
    }
    // A signed or token URL would be copied into the run's input, its history and the logs; the
    // sha256 pins the bytes, so the URL needs no secret. The message does not repeat the query.
    if (uri.getRawQuery() != null || uri.getRawFragment() != null) {
      return Optional.of("artifact " + artifact.name() + ": source URL must carry no query string or fragment"
          + " (credentials in a URL would reach the run's history and logs); serve it from a URL without them");
    }
    String host = uri.getHost().toLowerCase(Locale.ROOT);
    if (!hostAllowed(host)) {
      return Optional.of("artifact " + artifact.name() + ": host " + host + " is not in the allowed artifact hosts "
          + List.copyOf(allowedHosts.stream().sorted().toList()) + " (INPLACE_ARTIFACT_HOSTS)");
    }
    return Optional.empty();
  }
}
