package dev.inplace.starter;

import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.KubeVersion;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Pattern;

/**
 * The files one release is made of, under the names its upstream publishes them (a mirror keeps
 * those names), and where each is installed in the distribution's standard layout: what {@code
 * inplace catalogue add} looks for. docs/catalogue.md has the table.
 */
final class ReleaseFiles {
  /** The Kairos OS image archive of an air-gapped mirror (a tar of the image's root filesystem). */
  static final String KAIROS_ARCHIVE = "kairos-os-image.tar";

  private static final Pattern ARCH = Pattern.compile("[a-z0-9]{1,16}");
  private static final Pattern K3S_VERSION = Pattern.compile("v\\d+\\.\\d+\\.\\d+\\+k3s\\d+");
  private static final Pattern K0S_VERSION = Pattern.compile("v\\d+\\.\\d+\\.\\d+\\+k0s\\.\\d+");
  private static final Pattern KUBEADM_VERSION = Pattern.compile("v\\d+\\.\\d+\\.\\d+");

  /**
   * One artifact of the release: the first of {@code fileNames} the mirror has is taken.
   *
   * @param name the artifact's name in the catalogue
   * @param installDir where it is installed
   * @param installName its file name there; null: the mirror's file name (image archives)
   */
  record Wanted(String name, ArtifactKind kind, List<String> fileNames, String installDir, String installName, String mode) {
    String installPath(String fileName) {
      return installDir + "/" + (installName == null ? fileName : installName);
    }
  }

  private ReleaseFiles() {}

  /**
   * The artifacts of {@code version}, or an {@link IllegalArgumentException} naming the expected
   * version form. {@code binariesOnly} leaves the image archives out (nodes that may pull images).
   */
  static List<Wanted> of(Distribution distribution, HostOs os, String version, String arch, boolean binariesOnly) {
    if (arch == null || !ARCH.matcher(arch).matches()) {
      throw new IllegalArgumentException("--arch must be a Go architecture name such as amd64 or arm64, got '" + arch + "'");
    }
    KubeVersion.parse(version);
    Pattern form = switch (distribution) {
      case K3S -> K3S_VERSION;
      case K0S -> K0S_VERSION;
      case KUBEADM -> KUBEADM_VERSION;
    };
    if (!form.matcher(version).matches()) {
      throw new IllegalArgumentException("'" + version + "' is not a " + distribution + " release version; expected "
          + switch (distribution) {
            case K3S -> "vX.Y.Z+k3sN, e.g. v1.31.2+k3s1";
            case K0S -> "vX.Y.Z+k0s.N, e.g. v1.31.2+k0s.0";
            case KUBEADM -> "vX.Y.Z, e.g. v1.31.2";
          });
    }
    if (HostOs.orStandard(os) == HostOs.KAIROS) {
      return List.of(new Wanted("os-image", ArtifactKind.OS_IMAGE, List.of(KAIROS_ARCHIVE),
          ArtifactRules.KAIROS_ACTIVE_IMAGE.substring(0, ArtifactRules.KAIROS_ACTIVE_IMAGE.lastIndexOf('/')),
          ArtifactRules.KAIROS_ACTIVE_IMAGE.substring(ArtifactRules.KAIROS_ACTIVE_IMAGE.lastIndexOf('/') + 1), "0644"));
    }
    HostProfile layout = distribution.defaultProfile();
    List<Wanted> files = new ArrayList<>();
    switch (distribution) {
      case K3S -> {
        String binary = switch (arch) {
          case "amd64" -> "k3s";
          case "arm" -> "k3s-armhf";
          default -> "k3s-" + arch;
        };
        files.add(binary("k3s", List.of(binary), layout));
        files.add(images("k3s-airgap-images", compressions("k3s-airgap-images-" + arch), layout));
      }
      case KUBEADM -> {
        for (String name : List.of("kubeadm", "kubelet", "kubectl")) {
          files.add(binary(name, List.of(name), layout));
        }
        files.add(images("kubernetes-images", compressions("kubernetes-images-" + arch), layout));
      }
      case K0S -> {
        files.add(binary("k0s", List.of("k0s-" + version + "-" + arch, "k0s"), layout));
        files.add(images("k0s-airgap-bundle", List.of("k0s-airgap-bundle-" + version + "-" + arch,
            "k0s-airgap-bundle-" + version.replace('+', '-') + "-" + arch), layout));
      }
    }
    return binariesOnly ? files.stream().filter(w -> w.kind() == ArtifactKind.BINARY).toList() : List.copyOf(files);
  }

  private static Wanted binary(String name, List<String> fileNames, HostProfile layout) {
    return new Wanted(name, ArtifactKind.BINARY, fileNames, layout.binDir(), name, "0755");
  }

  private static Wanted images(String name, List<String> fileNames, HostProfile layout) {
    return new Wanted(name, ArtifactKind.IMAGE_ARCHIVE, fileNames, layout.imagesDir(), null, "0644");
  }

  /** {@code base.tar.zst}, {@code base.tar.gz}, {@code base.tar}: the forms k3s and containerd import. */
  private static List<String> compressions(String base) {
    return List.of(base + ".tar.zst", base + ".tar.gz", base + ".tar");
  }
}
