package dev.inplace.sandbox.release;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.Distribution;
import java.util.ArrayList;
import java.util.List;

/**
 * One generated release: its binaries and its image archive.
 *
 * @param version the version, such as {@code v1.30.4+k3s1} or {@code v1.31.2}
 * @param distribution k3s (one {@code k3s} binary) or kubeadm ({@code kubeadm}, {@code kubelet},
 *     {@code kubectl})
 * @param binaries the binaries, the one reporting the node's version first
 * @param images the image archive
 */
public record FakeRelease(String version, Distribution distribution, List<Artifact> binaries, Artifact images) {

  public FakeRelease {
    binaries = List.copyOf(binaries);
  }

  /** A k3s release: the {@code k3s} binary and its air-gap image archive. */
  public FakeRelease(String version, Artifact binary, Artifact images) {
    this(version, Distribution.K3S, List.of(binary), images);
  }

  /** The binary whose {@code --version} the kubelet simulator reads ({@code k3s} or {@code kubelet}). */
  public Artifact binary() {
    return binaries.get(0);
  }

  /** The binary named {@code name}. */
  public Artifact binary(String name) {
    return binaries.stream()
        .filter(b -> b.name().equals(name))
        .findFirst()
        .orElseThrow(() -> new IllegalArgumentException("release " + version + " has no binary " + name));
  }

  public List<Artifact> artifacts() {
    List<Artifact> all = new ArrayList<>(binaries);
    all.add(images);
    return all;
  }
}
