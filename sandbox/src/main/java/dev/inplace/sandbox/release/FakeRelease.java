package dev.inplace.sandbox.release;

import dev.inplace.workflows.api.Artifact;
import java.util.List;

/**
 * One generated k3s release: the fake binary and its air-gap image archive.
 *
 * @param version the k3s version, such as {@code v1.30.4+k3s1}
 * @param binary the {@code k3s} binary
 * @param images the {@code k3s-airgap-images} archive
 */
public record FakeRelease(String version, Artifact binary, Artifact images) {

  public List<Artifact> artifacts() {
    return List.of(binary, images);
  }
}
