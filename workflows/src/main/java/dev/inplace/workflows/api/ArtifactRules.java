package dev.inplace.workflows.api;

import java.util.List;
import java.util.Locale;
import java.util.Optional;

/**
 * The catalogue rules that need no worker configuration, as pure functions: applied at intake and
 * again in the NodeUpgrade preflight (a run started by hand skips the intake). The rules that do
 * need configuration (https host allowlist, mirror directory, size cap) are the worker's
 * {@code ArtifactSourcePolicy}, applied at intake and again when the artifact is fetched, before
 * anything is written to a host.
 */
public final class ArtifactRules {
  private ArtifactRules() {}

  /** The first problem of these artifacts for this distribution, if any. */
  public static Optional<String> problem(List<Artifact> artifacts, Distribution distribution) {
    if (artifacts == null || artifacts.isEmpty()) {
      return Optional.of("no artifacts");
    }
    InstallLayout layout = distribution.installLayout();
    for (Artifact a : artifacts) {
      Optional<String> source = sourceForm(a);
      if (source.isPresent()) {
        return source;
      }
      Optional<String> path = layout.problem(a);
      if (path.isPresent()) {
        return path;
      }
    }
    return Optional.empty();
  }

  /** https, or a local file ({@code file:} or an absolute path) that the worker's mirror rule bounds. */
  static Optional<String> sourceForm(Artifact a) {
    String source = a.source().toLowerCase(Locale.ROOT);
    if (source.startsWith("https://") || source.startsWith("file:/") || source.startsWith("/")) {
      return Optional.empty();
    }
    String scheme = source.contains(":") ? source.substring(0, source.indexOf(':')) : "(none)";
    return Optional.of("artifact " + a.name() + ": source scheme " + scheme
        + " is not allowed; use https:// or a file: below the worker's mirror directory");
  }
}
