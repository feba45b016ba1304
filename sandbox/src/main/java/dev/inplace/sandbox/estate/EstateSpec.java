package dev.inplace.sandbox.estate;

import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.workflows.api.KubeVersion;
import java.time.Duration;

/**
 * What the simulated estate holds: one CAPI k3s cluster with {@code controlPlanes} servers and
 * {@code workers} agents, all on {@code fromVersion}, with release artifacts for both versions.
 */
public record EstateSpec(
    int controlPlanes,
    int workers,
    String fromVersion,
    String toVersion,
    FakeReleaseSizes sizes,
    Duration kubeletStartupDelay) {
  public static final String DEFAULT_FROM = "v1.30.6+k3s1";
  public static final String DEFAULT_TO = "v1.31.2+k3s1";

  public EstateSpec {
    if (controlPlanes < 1 || controlPlanes > 9) {
      throw new IllegalArgumentException("--control-planes must be 1..9, got " + controlPlanes);
    }
    if (workers < 0 || workers > 200) {
      throw new IllegalArgumentException("--workers must be 0..200, got " + workers);
    }
    KubeVersion.parse(fromVersion);
    KubeVersion.parse(toVersion);
  }

  public static EstateSpec defaults() {
    return new EstateSpec(1, 3, DEFAULT_FROM, DEFAULT_TO, FakeReleaseSizes.defaults(), Duration.ofSeconds(1));
  }
}
