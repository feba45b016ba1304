package dev.inplace.workflows.api;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.Set;

/**
 * The catalogue rules that need no worker configuration, as pure functions: applied at intake and
 * again in the NodeUpgrade preflight (a run started by hand skips the intake). The rules that do
 * need configuration (https host allowlist, mirror directory, size cap) are the worker's
 * {@code ArtifactSourcePolicy}, applied at intake and again when the artifact is fetched, before
 * anything is written to a host.
 */
public final class ArtifactRules {
  private ArtifactRules() {}

  /** The first problem of these artifacts for this distribution on standard hosts, if any. */
  public static Optional<String> problem(List<Artifact> artifacts, Distribution distribution) {
    return problem(artifacts, distribution, HostOs.STANDARD);
  }

  /**
   * The first problem of these artifacts for this distribution on hosts of {@code os}, if any. A
   * Kairos release is one OS image ({@link #kairosProblem}); a standard release has none.
   */
  public static Optional<String> problem(List<Artifact> artifacts, Distribution distribution, HostOs os) {
    if (artifacts == null || artifacts.isEmpty()) {
      return Optional.of("no artifacts");
    }
    if (HostOs.orStandard(os) == HostOs.KAIROS) {
      return kairosProblem(artifacts);
    }
    InstallLayout layout = distribution.installLayout();
    for (Artifact a : artifacts) {
      if (a.kind() == ArtifactKind.OS_IMAGE) {
        return Optional.of("artifact " + a.name() + ": an OS image needs hosts with os kairos");
      }
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

  /**
   * The artifact hosts allowed when the worker configures none ({@code INPLACE_ARTIFACT_HOSTS}
   * unset): the hosts the distributions' own releases are served from, redirects included (k3s and
   * k0s on GitHub releases, kubeadm, kubelet and kubectl on dl.k8s.io). The worker's {@code
   * ArtifactSourcePolicy} and the CLI's {@code catalogue add} share it.
   */
  public static final Set<String> RELEASE_HOSTS = Set.of(
      "github.com", "objects.githubusercontent.com", "release-assets.githubusercontent.com", "dl.k8s.io", "cdn.dl.k8s.io");

  /** Where {@code kairos-agent upgrade} writes the new system: the active image of the state partition. */
  public static final String KAIROS_ACTIVE_IMAGE = "/run/initramfs/cos-state/cOS/active.img";

  private static final Pattern OCI = Pattern.compile(
      "oci:([a-z0-9][a-z0-9.-]*(:[0-9]{1,5})?)/[a-z0-9][a-z0-9._/-]*(:[A-Za-z0-9._-]{1,128})?@sha256:([0-9a-f]{64})");

  /**
   * A Kairos release: exactly one OS image, installed as the active image; from a registry pinned by
   * digest ({@code oci:HOST/REPO[:TAG]@sha256:HEX}, HEX being the artifact's sha256) or from an
   * archive the worker fetches and stages (https or the mirror, as every other artifact).
   */
  static Optional<String> kairosProblem(List<Artifact> artifacts) {
    if (artifacts.size() != 1 || artifacts.get(0).kind() != ArtifactKind.OS_IMAGE) {
      return Optional.of("a Kairos release is exactly one OS_IMAGE artifact, got "
          + artifacts.stream().map(a -> a.name() + " (" + a.kind() + ")").toList());
    }
    Artifact a = artifacts.get(0);
    if (!KAIROS_ACTIVE_IMAGE.equals(a.installPath())) {
      return Optional.of("artifact " + a.name() + ": an OS image is installed as " + KAIROS_ACTIVE_IMAGE
          + ", got " + a.installPath());
    }
    if (pulledByHost(a)) {
      Matcher m = OCI.matcher(a.source());
      if (!m.matches()) {
        return Optional.of("artifact " + a.name() + ": an oci: source must be oci:HOST/REPO[:TAG]@sha256:<64 hex>,"
            + " got " + a.source());
      }
      if (!m.group(4).equals(a.sha256())) {
        return Optional.of("artifact " + a.name() + ": the source's digest sha256:" + m.group(4)
            + " is not the artifact's sha256 " + a.sha256());
      }
      return Optional.empty();
    }
    return sourceForm(a);
  }

  /** Whether the host pulls this artifact itself (an OS image from a registry): the worker stages nothing. */
  public static boolean pulledByHost(Artifact a) {
    return a.kind() == ArtifactKind.OS_IMAGE && a.source().startsWith("oci:");
  }

  /** The registry host of an artifact the host pulls, for the worker's allowlist; empty otherwise. */
  public static Optional<String> registryHost(Artifact a) {
    Matcher m = OCI.matcher(a.source());
    return pulledByHost(a) && m.matches() ? Optional.of(m.group(1)) : Optional.empty();
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
