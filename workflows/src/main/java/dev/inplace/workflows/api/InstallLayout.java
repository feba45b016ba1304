package dev.inplace.workflows.api;

import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Where a distribution's artifacts may be installed on a host: the allowlist that stops a catalogue
 * writer (or whoever starts a run by hand) from writing {@code /etc/sudoers} or a root SSH key with
 * an "artifact". A binary goes into one of {@code binaryDirs} under one of {@code binaryNames}; an
 * image archive goes directly into one of {@code imageDirs}, its name matching {@code archiveNames}.
 * One per {@link Distribution} ({@link Distribution#installLayout()}); a new distribution adds its own.
 */
public record InstallLayout(
    List<String> binaryDirs, Set<String> binaryNames, List<String> imageDirs, Pattern archiveNames) {
  /** {@code name.tar}, optionally compressed: what k3s and containerd import. */
  public static final Pattern TAR_ARCHIVES = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._+-]*\\.tar(\\.(gz|zst|lz4|bz2))?");

  public InstallLayout {
    binaryDirs = List.copyOf(binaryDirs);
    binaryNames = Set.copyOf(binaryNames);
    imageDirs = List.copyOf(imageDirs);
  }

  /** Image archives named {@code *.tar[.gz|.zst|.lz4|.bz2]}. */
  public InstallLayout(List<String> binaryDirs, Set<String> binaryNames, List<String> imageDirs) {
    this(binaryDirs, binaryNames, imageDirs, TAR_ARCHIVES);
  }

  /** k3s: the install script's bin dirs (INSTALL_K3S_BIN_DIR is /usr/local/bin, or /opt/bin on read-only /usr). */
  public static InstallLayout k3s() {
    return new InstallLayout(List.of("/usr/local/bin", "/opt/bin"), Set.of("k3s"),
        List.of("/var/lib/rancher/k3s/agent/images"));
  }

  /** kubeadm: the Kubernetes packages' /usr/bin (or a manual /usr/local/bin install). */
  public static InstallLayout kubeadm() {
    return new InstallLayout(List.of("/usr/bin", "/usr/local/bin"), Set.of("kubeadm", "kubelet", "kubectl"),
        List.of("/var/lib/inplace/images"));
  }

  /** k0s: the {@code k0s} binary; airgap bundles (named without an extension) in /var/lib/k0s/images. */
  public static InstallLayout k0s() {
    return new InstallLayout(List.of("/usr/local/bin", "/usr/bin"), Set.of("k0s"), List.of("/var/lib/k0s/images"),
        Pattern.compile("[A-Za-z0-9][A-Za-z0-9._+-]*"));
  }

  /** Why {@code artifact}'s install path is outside this layout, if it is. */
  public Optional<String> problem(Artifact artifact) {
    String path = artifact.installPath();
    int slash = path.lastIndexOf('/');
    String dir = slash <= 0 ? "/" : path.substring(0, slash);
    String file = path.substring(slash + 1);
    if (artifact.kind() == ArtifactKind.IMAGE_ARCHIVE) {
      if (imageDirs.contains(dir) && archiveNames.matcher(file).matches()) {
        return Optional.empty();
      }
      return Optional.of("artifact " + artifact.name() + ": image archive path " + path
          + " is outside the distribution's layout; allowed: a file matching " + archiveNames.pattern()
          + " directly in " + String.join(" or ", imageDirs));
    }
    if (binaryDirs.contains(dir) && binaryNames.contains(file)) {
      return Optional.empty();
    }
    return Optional.of("artifact " + artifact.name() + ": install path " + path
        + " is outside the distribution's layout; allowed: " + String.join(", ", binaryNames.stream().sorted().toList())
        + " in " + String.join(" or ", binaryDirs));
  }
}
