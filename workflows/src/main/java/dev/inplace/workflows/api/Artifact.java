package dev.inplace.workflows.api;

import java.util.Locale;
import java.util.regex.Pattern;

/**
 * One file of a release, resolved from the release catalogue when a run starts (frozen afterwards).
 *
 * @param name short name, unique within a release (for example {@code k3s})
 * @param kind binary or image archive
 * @param source where the worker fetches it from: {@code file:/...}, an absolute path, or an http(s) URL
 * @param sha256 lower-case hex digest the file must have everywhere it is copied
 * @param sizeBytes expected size, used for the free-disk preflight
 * @param installPath absolute path on the host (a binary's path, or the archive's path in imagesDir)
 * @param mode octal file mode such as {@code 0755}
 */
public record Artifact(
    String name,
    ArtifactKind kind,
    String source,
    String sha256,
    long sizeBytes,
    String installPath,
    String mode) {
  private static final Pattern SHA256 = Pattern.compile("[0-9a-f]{64}");
  private static final Pattern MODE = Pattern.compile("0?[0-7]{3}");

  public Artifact {
    Requests.requireName("artifact name", name);
    if (kind == null) {
      throw new IllegalArgumentException("artifact " + name + ": kind is required");
    }
    Requests.requireText("artifact " + name + " source", source);
    sha256 = sha256 == null ? null : sha256.toLowerCase(Locale.ROOT);
    if (sha256 == null || !SHA256.matcher(sha256).matches()) {
      throw new IllegalArgumentException(
          "artifact " + name + ": sha256 must be 64 hex characters, got " + sha256);
    }
    if (sizeBytes < 0) {
      throw new IllegalArgumentException("artifact " + name + ": sizeBytes must be >= 0");
    }
    Requests.requireAbsolutePath("artifact " + name + " installPath", installPath);
    if (mode == null || !MODE.matcher(mode).matches()) {
      throw new IllegalArgumentException("artifact " + name + ": mode must be octal like 0755");
    }
  }

  /** File name of the staged copy: unique per digest, so a staged file is trusted by its name. */
  public String stagedFileName() {
    return name + "." + sha256;
  }
}
