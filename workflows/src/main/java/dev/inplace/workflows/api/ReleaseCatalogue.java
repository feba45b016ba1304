package dev.inplace.workflows.api;

import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.util.List;
import java.util.stream.Collectors;

/**
 * The release catalogue: which artifacts (with digests) make up each version of each distribution.
 * A JSON file: {@code {"releases":[{"version":"v1.31.2+k3s1","distribution":"K3S","arch":"amd64",
 * "artifacts":[{"name":..,"kind":"BINARY","source":..,"sha256":..,"sizeBytes":..,"installPath":..,
 * "mode":"0755"}]}]}}. Resolved once when a run starts; the run then carries the artifacts frozen.
 * Only parsing lives here; reading a file or a ConfigMap is the caller's business.
 */
public record ReleaseCatalogue(List<Release> releases) {

  /** One version of one distribution for one architecture. */
  public record Release(String version, Distribution distribution, String arch, List<Artifact> artifacts, HostOs os) {
    /** A release for standard hosts. */
    public Release(String version, Distribution distribution, String arch, List<Artifact> artifacts) {
      this(version, distribution, arch, artifacts, HostOs.STANDARD);
    }

    public Release {
      os = HostOs.orStandard(os);
      KubeVersion.parse(version);
      if (distribution == null) {
        throw new IllegalArgumentException("release " + version + ": distribution is required");
      }
      arch = arch == null ? "amd64" : arch;
      if (artifacts == null || artifacts.isEmpty()) {
        throw new IllegalArgumentException("release " + version + ": no artifacts");
      }
      artifacts = List.copyOf(artifacts);
    }
  }

  private static final ObjectMapper JSON =
      new ObjectMapper().configure(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES, true);

  public ReleaseCatalogue {
    releases = releases == null ? List.of() : List.copyOf(releases);
  }

  /** Parses catalogue JSON from {@code source} (named in errors), naming the problem when malformed. */
  public static ReleaseCatalogue parse(String json, String source) {
    try {
      return JSON.readValue(json, ReleaseCatalogue.class);
    } catch (IOException | IllegalArgumentException e) {
      throw new IllegalArgumentException("release catalogue " + source + " is not valid: " + e.getMessage(), e);
    }
  }

  /** The release for standard hosts of a version, distribution and architecture. */
  public Release find(String version, Distribution distribution, String arch) {
    return find(version, distribution, arch, HostOs.STANDARD);
  }

  /**
   * The release for a version, distribution, architecture and host OS ({@code "os":"KAIROS"} in the
   * catalogue, absent for standard hosts), or a clear error listing what exists.
   */
  public Release find(String version, Distribution distribution, String arch, HostOs os) {
    HostOs wanted = HostOs.orStandard(os);
    return releases.stream()
        .filter(r -> r.version().equals(version) && r.distribution() == distribution && r.arch().equals(arch)
            && r.os() == wanted)
        .findFirst()
        .orElseThrow(
            () ->
                new IllegalArgumentException(
                    "no " + distribution + " " + arch + " release " + version
                        + (wanted == HostOs.STANDARD ? "" : " for " + wanted.cliName() + " hosts")
                        + " in the catalogue; it has: "
                        + releases.stream()
                            .map(r -> r.distribution() + " " + r.arch() + " " + r.version()
                                + (r.os() == HostOs.STANDARD ? "" : " (" + r.os().cliName() + ")"))
                            .collect(Collectors.joining(", "))));
  }
}
