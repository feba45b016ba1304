package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every k3s script, rendered from fixed inputs, must equal its golden file byte for byte, start
 * with the header the sandbox's fault injection relies on, and be valid bash.
 *
 * <p>After an intended change to a template, regenerate the golden files and review the diff:
 *
 * <pre>
 * mvn -B -o -pl activities test -Dtest=K3sScriptsGoldenTest -Dgolden.update=true
 * </pre>
 */
class K3sScriptsGoldenTest {
  private static final GoldenScripts GOLDEN = new GoldenScripts("k3s");

  static final HostProfile PROFILE = HostProfile.k3sDefaults();
  static final Artifact K3S =
      new Artifact(
          "k3s",
          ArtifactKind.BINARY,
          "file:/srv/releases/v1.31.2+k3s1/k3s",
          "1111111111111111111111111111111111111111111111111111111111111111",
          71_000_000,
          "/usr/local/bin/k3s",
          "0755");
  static final Artifact IMAGES =
      new Artifact(
          "k3s-airgap-images",
          ArtifactKind.IMAGE_ARCHIVE,
          "https://releases.example.com/v1.31.2+k3s1/k3s-airgap-images-amd64.tar.zst",
          "2222222222222222222222222222222222222222222222222222222222222222",
          180_000_000,
          "/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst",
          "0644");
  static final List<InstalledFile> PREVIOUS =
      List.of(
          new InstalledFile(
              "/usr/local/bin/k3s",
              "3333333333333333333333333333333333333333333333333333333333333333"),
          new InstalledFile(IMAGES.installPath(), null));

  static Stream<Arguments> scripts() {
    HostScripts scripts = new HostScripts(HostDistribution.k3s());
    List<Artifact> both = List.of(K3S, IMAGES);
    Map<String, RemoteScript> rendered =
        Map.of(
            "inspect", scripts.inspect(PROFILE, "k3s", both),
            "stage-prepare", scripts.stagePrepare(PROFILE, both),
            "stage-commit", scripts.stageCommit(PROFILE, both),
            "backup", scripts.backup(PROFILE, PREVIOUS.subList(0, 1)),
            "install", scripts.install(PROFILE, both),
            "restart", scripts.restart("k3s"),
            "restore", scripts.restore(PROFILE, PREVIOUS),
            "etcd-snapshot", scripts.etcdSnapshot(PROFILE, "inplace-pre-v1.31.2+k3s1"));
    return rendered.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .map(e -> Arguments.of(e.getKey(), e.getValue()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void renderedScriptMatchesGoldenFile(String name, RemoteScript script) throws IOException {
    GOLDEN.assertMatchesGoldenFile(name, script);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void renderedScriptStartsWithTheStepHeader(String name, RemoteScript script) {
    GoldenScripts.assertStepHeader(script);
    assertEquals(name, script.name());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void renderedScriptIsValidBash(String name, RemoteScript script) throws Exception {
    GoldenScripts.assertValidBash(name, script);
  }
}
