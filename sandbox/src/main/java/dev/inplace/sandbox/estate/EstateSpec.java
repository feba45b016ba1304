package dev.inplace.sandbox.estate;

import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.workflows.api.KubeVersion;
import java.time.Duration;

/**
 * What the simulated estate holds: one CAPI k3s cluster with {@code controlPlanes} servers and
 * {@code pools} MachineDeployments of {@code workers} agents each, all on {@code fromVersion}, with
 * release artifacts for both versions. With one pool the workers are {@code worker-0..}; with more
 * they are {@code worker-a-0..}, {@code worker-b-0..}.
 */
public record EstateSpec(
    int controlPlanes,
    int pools,
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
    if (pools < 1 || pools > 26) {
      throw new IllegalArgumentException("--pools must be 1..26, got " + pools);
    }
    if (workers < 0 || pools * workers > 200) {
      throw new IllegalArgumentException("--workers must be 0..200 in all pools, got " + pools + " x " + workers);
    }
    KubeVersion.parse(fromVersion);
    KubeVersion.parse(toVersion);
  }

  /** The MachineDeployment of pool {@code index}. */
  public String poolName(String cluster, int index) {
    return pools == 1 ? cluster + "-workers" : cluster + "-workers-" + (char) ('a' + index);
  }

  /** The node name of worker {@code i} of pool {@code index}. */
  public String workerName(int index, int i) {
    return pools == 1 ? "worker-" + i : "worker-" + (char) ('a' + index) + "-" + i;
  }

  public static EstateSpec defaults() {
    return new EstateSpec(3, 2, 3, DEFAULT_FROM, DEFAULT_TO, FakeReleaseSizes.defaults(), Duration.ofSeconds(1));
  }
}
