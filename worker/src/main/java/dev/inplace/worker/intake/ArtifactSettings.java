package dev.inplace.worker.intake;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/** Reads the catalogue source policy from the environment (documented in docs/configuration.md). */
public final class ArtifactSettings {
  /**
   * Comma-separated https hosts artifacts may come from, redirect hops included; unset or empty
   * means the distributions' release hosts ({@link ArtifactSourcePolicy#RELEASE_HOSTS}), {@code *}
   * any https host.
   */
  public static final String ARTIFACT_HOSTS = "INPLACE_ARTIFACT_HOSTS";
  /** The one directory {@code file:} sources may lie below (an air-gapped mirror); unset means none. */
  public static final String ARTIFACT_MIRROR_DIR = "INPLACE_ARTIFACT_MIRROR_DIR";
  /** The largest artifact the worker fetches, in bytes (default 2 GiB). */
  public static final String ARTIFACT_MAX_BYTES = "INPLACE_ARTIFACT_MAX_BYTES";

  public static final List<String> KEYS = List.of(ARTIFACT_HOSTS, ARTIFACT_MIRROR_DIR, ARTIFACT_MAX_BYTES);

  private ArtifactSettings() {}

  public static ArtifactSourcePolicy fromEnvironment(Map<String, String> env) {
    String hosts = env.getOrDefault(ARTIFACT_HOSTS, "");
    Set<String> allowed = Arrays.stream(hosts.split(",")).map(String::trim).filter(h -> !h.isEmpty())
        .collect(Collectors.toSet());
    if (allowed.isEmpty()) {
      allowed = ArtifactSourcePolicy.RELEASE_HOSTS;
    } else if (allowed.contains(ArtifactSourcePolicy.ANY_HOST) && allowed.size() > 1) {
      throw new IllegalArgumentException(ARTIFACT_HOSTS + ": '*' (any https host) stands alone, got " + hosts);
    }
    for (String h : allowed) {
      if (!h.matches("[A-Za-z0-9.-]+") && !h.equals(ArtifactSourcePolicy.ANY_HOST)) {
        throw new IllegalArgumentException(ARTIFACT_HOSTS + ": '" + h + "' is not a host name");
      }
    }
    String dir = env.getOrDefault(ARTIFACT_MIRROR_DIR, "").trim();
    Path mirror = null;
    if (!dir.isEmpty()) {
      mirror = Path.of(dir);
      if (!mirror.isAbsolute() || !Files.isDirectory(mirror)) {
        throw new IllegalArgumentException(ARTIFACT_MIRROR_DIR + " must be an existing absolute directory, got " + dir);
      }
    }
    long max = ArtifactSourcePolicy.DEFAULT_MAX_BYTES;
    String text = env.getOrDefault(ARTIFACT_MAX_BYTES, "").trim();
    if (!text.isEmpty()) {
      try {
        max = Long.parseLong(text);
      } catch (NumberFormatException e) {
        throw new IllegalArgumentException(ARTIFACT_MAX_BYTES + " must be a number of bytes, got " + text);
      }
      if (max <= 0) {
        throw new IllegalArgumentException(ARTIFACT_MAX_BYTES + " must be > 0, got " + text);
      }
    }
    return new ArtifactSourcePolicy(allowed, mirror, max);
  }
}
