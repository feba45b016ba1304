package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every k0s script, rendered from fixed inputs, must equal its golden file byte for byte, start
 * with the header the sandbox's fault injection relies on, and be valid bash.
 *
 * <p>After an intended change to a template, regenerate the golden files and review the diff:
 *
 * <pre>
 * mvn -B -o -pl activities test -Dtest=K0sScriptsGoldenTest -Dgolden.update=true
 * </pre>
 */
class K0sScriptsGoldenTest {
  private static final Path GOLDEN_DIR = Path.of("src/test/resources/golden/k0s");
  private static final boolean UPDATE = Boolean.getBoolean("golden.update");

  static final HostProfile PROFILE = HostProfile.k0sDefaults();
  static final Artifact K0S =
      new Artifact(
          "k0s",
          ArtifactKind.BINARY,
          "file:/srv/releases/v1.31.2+k0s.0/k0s",
          "1111111111111111111111111111111111111111111111111111111111111111",
          250_000_000,
          "/usr/local/bin/k0s",
          "0755");
  static final Artifact BUNDLE =
      new Artifact(
          "k0s-airgap-bundle",
          ArtifactKind.IMAGE_ARCHIVE,
          "https://releases.example.com/v1.31.2+k0s.0/k0s-airgap-bundle-v1.31.2+k0s.0-amd64",
          "2222222222222222222222222222222222222222222222222222222222222222",
          250_000_000,
          "/var/lib/k0s/images/k0s-airgap-bundle-v1.31.2-k0s.0-amd64.tar",
          "0644");
  static final List<InstalledFile> PREVIOUS =
      List.of(
          new InstalledFile(
              "/usr/local/bin/k0s",
              "3333333333333333333333333333333333333333333333333333333333333333"),
          new InstalledFile(BUNDLE.installPath(), null));

  static Stream<Arguments> scripts() {
    HostScripts scripts = new HostScripts(HostDistribution.k0s());
    List<Artifact> both = List.of(K0S, BUNDLE);
    Map<String, RemoteScript> rendered =
        Map.of(
            "inspect", scripts.inspect(PROFILE, "k0scontroller", both),
            "stage-prepare", scripts.stagePrepare(PROFILE, both),
            "stage-commit", scripts.stageCommit(PROFILE, both),
            "backup", scripts.backup(PROFILE, PREVIOUS.subList(0, 1)),
            "install", scripts.install(PROFILE, both),
            "restart", scripts.restart("k0scontroller"),
            "restore", scripts.restore(PROFILE, PREVIOUS),
            "etcd-snapshot", scripts.etcdSnapshot(PROFILE, "inplace-pre-v1-31-2-k0s-0"));
    return rendered.entrySet().stream()
        .sorted(Map.Entry.comparingByKey())
        .map(e -> Arguments.of(e.getKey(), e.getValue()));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void renderedScriptMatchesGoldenFile(String name, RemoteScript script) throws IOException {
    Path golden = GOLDEN_DIR.resolve(name + ".sh");
    if (UPDATE) {
      Files.createDirectories(GOLDEN_DIR);
      Files.writeString(golden, script.text(), StandardCharsets.UTF_8);
    }
    assertTrue(
        Files.exists(golden), "missing golden file " + golden + "; run with -Dgolden.update=true");
    assertEquals(Files.readString(golden, StandardCharsets.UTF_8), script.text());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void renderedScriptStartsWithTheStepHeader(String name, RemoteScript script) {
    List<String> lines = Arrays.asList(script.text().split("\n", 5));
    assertEquals(
        List.of(
            "#!/bin/bash",
            "# inplace-step: " + script.step(),
            "set -eu",
            "root=\"${INPLACE_HOST_ROOT:-}\""),
        lines.subList(0, 4));
    assertEquals(name, script.name());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void renderedScriptIsValidBash(String name, RemoteScript script) throws Exception {
    Process bash = new ProcessBuilder("bash", "-n").redirectErrorStream(true).start();
    try (var stdin = bash.getOutputStream()) {
      stdin.write(script.text().getBytes(StandardCharsets.UTF_8));
    }
    String output = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(bash.waitFor(10, TimeUnit.SECONDS));
    assertEquals(0, bash.exitValue(), name + ": " + output);
  }
}
