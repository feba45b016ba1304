package dev.inplace.sandbox.estate;


import dev.inplace.sandbox.hosts.HostServer;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.KubeVersion;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/**
 * What the simulated estate holds: one CAPI cluster of {@code distribution} (k3s or kubeadm) with
 * {@code controlPlanes} control-plane nodes and {@code pools} MachineDeployments of {@code workers}
 * workers each, all on {@code fromVersion}, with release artifacts for both versions. With one pool the workers are {@code worker-0..}; with more
 * they are {@code worker-a-0..}, {@code worker-b-0..}. With {@code clusterClass} the Cluster is
 * managed through a ClusterClass ({@code spec.topology}), which inplace refuses (docs/sandbox.md).
 */
public record EstateSpec(
    int controlPlanes,
    int pools,
    int workers,
    String fromVersion,
    String toVersion,
    FakeReleaseSizes sizes,
    Duration kubeletStartupDelay,
    Distribution distribution,
    HostServer hosts,
    boolean clusterClass,
    HostOs os) {
  public static final String DEFAULT_FROM = "v1.30.6+k3s1";
  public static final String DEFAULT_TO = "v1.31.2+k3s1";
  public static final String DEFAULT_KUBEADM_FROM = "v1.30.6";
  public static final String DEFAULT_KUBEADM_TO = "v1.31.2";
  public static final String DEFAULT_K0S_FROM = "v1.30.6+k0s.0";
  public static final String DEFAULT_K0S_TO = "v1.31.2+k0s.0";

  /** An estate of standard hosts whose Cluster is not managed through a ClusterClass. */
  public EstateSpec(
      int controlPlanes, int pools, int workers, String fromVersion, String toVersion, FakeReleaseSizes sizes,
      Duration kubeletStartupDelay, Distribution distribution, HostServer hosts) {
    this(controlPlanes, pools, workers, fromVersion, toVersion, sizes, kubeletStartupDelay, distribution, hosts,
        false, HostOs.STANDARD);
  }

  /** An estate on MINA hosts. */
  public EstateSpec(
      int controlPlanes, int pools, int workers, String fromVersion, String toVersion, FakeReleaseSizes sizes,
      Duration kubeletStartupDelay, Distribution distribution) {
    this(controlPlanes, pools, workers, fromVersion, toVersion, sizes, kubeletStartupDelay, distribution,
        HostServer.MINA);
  }

  /** A k3s estate. */
  public EstateSpec(
      int controlPlanes, int pools, int workers, String fromVersion, String toVersion, FakeReleaseSizes sizes,
      Duration kubeletStartupDelay) {
    this(controlPlanes, pools, workers, fromVersion, toVersion, sizes, kubeletStartupDelay, Distribution.K3S);
  }

  /** The version an estate of {@code distribution} starts on by default. */
  public static String defaultFrom(Distribution distribution) {
    return switch (distribution) {
      case KUBEADM -> DEFAULT_KUBEADM_FROM;
      case K0S -> DEFAULT_K0S_FROM;
      case K3S -> DEFAULT_FROM;
    };
  }

  /** The version an estate of {@code distribution} is upgraded to by default. */
  public static String defaultTo(Distribution distribution) {
    return switch (distribution) {
      case KUBEADM -> DEFAULT_KUBEADM_TO;
      case K0S -> DEFAULT_K0S_TO;
      case K3S -> DEFAULT_TO;
    };
  }

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
    distribution = distribution == null ? Distribution.K3S : distribution;
    hosts = hosts == null ? HostServer.MINA : hosts;
    os = HostOs.orStandard(os);
  }

  /** The MachineDeployment of pool {@code index}. */
  public String poolName(String cluster, int index) {
    return pools == 1 ? cluster + "-workers" : cluster + "-workers-" + (char) ('a' + index);
  }

  /** The node name of worker {@code i} of pool {@code index}. */
  public String workerName(int index, int i) {
    return pools == 1 ? "worker-" + i : "worker-" + (char) ('a' + index) + "-" + i;
  }

  /** Every node's name, as {@code Estate} creates them: the control planes, then each pool's workers. */
  public List<String> nodeNames() {
    List<String> names = new ArrayList<>();
    for (int i = 0; i < controlPlanes; i++) {
      names.add("cp-" + i);
    }
    for (int p = 0; p < pools; p++) {
      for (int i = 0; i < workers; i++) {
        names.add(workerName(p, i));
      }
    }
    return names;
  }

  public static EstateSpec defaults() {
    return new EstateSpec(3, 2, 3, DEFAULT_FROM, DEFAULT_TO, FakeReleaseSizes.defaults(), Duration.ofSeconds(1));
  }

  /**
   * What a Node of this estate reports for a release: the release itself, except on k0s, whose
   * kubelet reports {@code v1.31.2+k0s} for {@code v1.31.2+k0s.N}.
   */
  public String nodeVersion(String release) {
    return nodeVersion(distribution, release);
  }

  public static String nodeVersion(Distribution distribution, String release) {
    return distribution == Distribution.K0S ? release.replaceFirst("\\+k0s\\.\\d+$", "+k0s") : release;
  }
}
