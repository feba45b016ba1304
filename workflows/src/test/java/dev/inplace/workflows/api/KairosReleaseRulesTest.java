package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** The catalogue rules for Kairos hosts: one OS image, pinned by digest, installed as the active image. */
class KairosReleaseRulesTest {
  private static final String SHA = "ab".repeat(32);

  private static Artifact image(String source, String installPath) {
    return new Artifact("os-image", ArtifactKind.OS_IMAGE, source, SHA, 1, installPath, "0644");
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "oci:quay.io/kairos/ubuntu:24.04-k3sv1.31.2@sha256:" + "abababababababababababababababababababababababababababababababab",
    "oci:registry.example.com:5000/edge/os@sha256:" + "abababababababababababababababababababababababababababababababab",
    "https://releases.example.com/kairos/rootfs.tar",
    "file:/mirror/kairos/rootfs.tar",
  })
  void acceptsAPinnedImageOrAnArchiveInstalledAsTheActiveImage(String source) {
    assertEquals(Optional.empty(),
        ArtifactRules.problem(List.of(image(source, ArtifactRules.KAIROS_ACTIVE_IMAGE)), Distribution.K3S, HostOs.KAIROS));
  }

  @ParameterizedTest(name = "{0} {1}")
  @CsvSource({
    "oci:quay.io/kairos/ubuntu:latest, /run/initramfs/cos-state/cOS/active.img, must be oci:HOST/REPO[:TAG]@sha256",
    "oci:quay.io/kairos/ubuntu@sha256:" + "cdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcdcd"
        + ", /run/initramfs/cos-state/cOS/active.img, is not the artifact's sha256",
    "oci:quay.io/kairos/ubuntu@sha256:" + "abababababababababababababababababababababababababababababababab"
        + ", /usr/local/bin/k3s, is installed as /run/initramfs/cos-state/cOS/active.img",
    "http://x.example/rootfs.tar, /run/initramfs/cos-state/cOS/active.img, source scheme http is not allowed",
    "oci:quay.io/kairos/ubuntu@sha256:" + "abababababababababababababababababababababababababababababababab"
        + ";reboot, /run/initramfs/cos-state/cOS/active.img, must be oci:HOST/REPO[:TAG]@sha256",
  })
  void refusesAnythingElseWithTheReason(String source, String path, String why) {
    Optional<String> problem = ArtifactRules.problem(List.of(image(source, path)), Distribution.K3S, HostOs.KAIROS);
    assertTrue(problem.isPresent() && problem.get().contains(why), problem.toString());
  }

  @Test
  void aKairosReleaseIsExactlyOneOsImage() {
    Artifact binary = new Artifact("k3s", ArtifactKind.BINARY, "https://x.example/k3s", SHA, 1, "/usr/local/bin/k3s", "0755");
    Artifact os = image("https://x.example/rootfs.tar", ArtifactRules.KAIROS_ACTIVE_IMAGE);
    assertTrue(ArtifactRules.problem(List.of(binary), Distribution.K3S, HostOs.KAIROS).orElseThrow()
        .contains("exactly one OS_IMAGE"));
    assertTrue(ArtifactRules.problem(List.of(os, os), Distribution.K3S, HostOs.KAIROS).orElseThrow()
        .contains("exactly one OS_IMAGE"));
  }

  @Test
  void aStandardHostRefusesAnOsImageAndAnOciSource() {
    Artifact os = image("oci:quay.io/kairos/ubuntu@sha256:" + SHA, ArtifactRules.KAIROS_ACTIVE_IMAGE);
    assertTrue(ArtifactRules.problem(List.of(os), Distribution.K3S).orElseThrow().contains("needs hosts with os kairos"));
    Artifact ociBinary = new Artifact("k3s", ArtifactKind.BINARY, "oci:quay.io/x@sha256:" + SHA, SHA, 1,
        "/usr/local/bin/k3s", "0755");
    assertTrue(ArtifactRules.problem(List.of(ociBinary), Distribution.K3S).orElseThrow()
        .contains("source scheme oci is not allowed"));
    assertEquals(false, ArtifactRules.pulledByHost(ociBinary));
  }

  @Test
  void theRegistryHostIsWhatTheAllowlistChecks() {
    assertEquals(Optional.of("registry.example.com:5000"),
        ArtifactRules.registryHost(image("oci:registry.example.com:5000/edge/os@sha256:" + SHA, "/x")));
    assertEquals(Optional.empty(), ArtifactRules.registryHost(image("https://registry.example.com/x.tar", "/x")));
  }

  @Test
  void theOsIsParsedStrictlyAndNullMeansStandard() {
    assertEquals(HostOs.KAIROS, HostOs.parse("kairos"));
    assertEquals(HostOs.KAIROS, HostOs.parse("KAIROS"));
    assertEquals(HostOs.STANDARD, HostOs.parse(null));
    assertEquals(HostOs.STANDARD, new HostProfile("/a", "/b", "/c", "/d", "s", "a", null).os());
    assertThrows(IllegalArgumentException.class, () -> HostOs.parse("flatcar"));
  }

  @Test
  void theCatalogueFindsTheReleaseOfTheHostsOs() {
    Artifact binary = new Artifact("k3s", ArtifactKind.BINARY, "https://x.example/k3s", SHA, 1, "/usr/local/bin/k3s", "0755");
    Artifact os = image("https://x.example/rootfs.tar", ArtifactRules.KAIROS_ACTIVE_IMAGE);
    ReleaseCatalogue catalogue = new ReleaseCatalogue(List.of(
        new ReleaseCatalogue.Release("v1.31.2+k3s1", Distribution.K3S, "amd64", List.of(binary)),
        new ReleaseCatalogue.Release("v1.31.2+k3s1", Distribution.K3S, "amd64", List.of(os), HostOs.KAIROS)));
    assertEquals(List.of(binary), catalogue.find("v1.31.2+k3s1", Distribution.K3S, "amd64").artifacts());
    assertEquals(List.of(os), catalogue.find("v1.31.2+k3s1", Distribution.K3S, "amd64", HostOs.KAIROS).artifacts());
    String json = "{\"releases\":[{\"version\":\"v1.31.2+k3s1\",\"distribution\":\"K3S\",\"arch\":\"amd64\",\"os\":\"KAIROS\","
        + "\"artifacts\":[{\"name\":\"os-image\",\"kind\":\"OS_IMAGE\",\"source\":\"https://x.example/r.tar\",\"sha256\":\""
        + SHA + "\",\"sizeBytes\":1,\"installPath\":\"" + ArtifactRules.KAIROS_ACTIVE_IMAGE + "\",\"mode\":\"0644\"}]}]}";
    ReleaseCatalogue parsed = ReleaseCatalogue.parse(json, "test");
    assertEquals(HostOs.KAIROS, parsed.releases().get(0).os());
    IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
        () -> parsed.find("v1.31.2+k3s1", Distribution.K3S, "amd64"));
    assertTrue(none.getMessage().contains("(kairos)"), none.getMessage());
  }
}
