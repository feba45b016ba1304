package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every script of a Kairos host (k3s, and the k0s inspect for its version hook), rendered from fixed
 * inputs, must equal its golden file, start with the step header and be valid bash.
 *
 * <pre>
 * mvn -B -o -pl activities -am test -Dtest=KairosScriptsGoldenTest -Dgolden.update=true -Dsurefire.failIfNoSpecifiedTests=false
 * </pre>
 */
class KairosScriptsGoldenTest {
  private static final GoldenScripts GOLDEN = new GoldenScripts("kairos");
  private static final String SHA = "5".repeat(64);

  static final HostProfile PROFILE = HostProfile.k3sDefaults().withOs(HostOs.KAIROS);
  static final Artifact PULLED =
      new Artifact("os-image", ArtifactKind.OS_IMAGE,
          "oci:quay.io/kairos/ubuntu:24.04-standard-amd64-generic-v3.2.4-k3sv1.31.2-k3s1@sha256:" + SHA, SHA,
          1_500_000_000L, ArtifactRules.KAIROS_ACTIVE_IMAGE, "0644");
  static final Artifact ARCHIVE =
      new Artifact("os-image", ArtifactKind.OS_IMAGE, "https://releases.example.com/kairos/v1.31.2-k3s1-rootfs.tar",
          SHA, 1_500_000_000L, ArtifactRules.KAIROS_ACTIVE_IMAGE, "0644");
  static final String BOOT = "0d039588-9b3c-4280-bcf8-33ebb80df53a";

  static Stream<Arguments> scripts() {
    HostScripts k3s = new HostScripts(HostDistribution.k3s());
    HostScripts k0s = new HostScripts(HostDistribution.k0s());
    Map<String, RemoteScript> rendered = new TreeMap<>();
    rendered.put("inspect", k3s.inspect(PROFILE, "k3s", List.of(PULLED)));
    rendered.put("inspect-k0s",
        k0s.inspect(HostProfile.k0sDefaults().withOs(HostOs.KAIROS), "k0sworker", List.of(PULLED)));
    rendered.put("stage-prepare", k3s.stagePrepare(PROFILE, List.of(ARCHIVE)));
    rendered.put("stage-commit", k3s.stageCommit(PROFILE, List.of(ARCHIVE)));
    rendered.put("backup", k3s.backup(PROFILE, List.of(new InstalledFile(ArtifactRules.KAIROS_ACTIVE_IMAGE, null))));
    rendered.put("install-oci", k3s.install(PROFILE, List.of(PULLED)));
    rendered.put("install-archive", k3s.install(PROFILE, List.of(ARCHIVE)));
    rendered.put("reboot", k3s.reboot(BOOT));
    rendered.put("after-reboot", k3s.afterReboot(BOOT, "k3s-agent"));
    rendered.put("restore", k3s.restore(PROFILE, List.of(new InstalledFile(ArtifactRules.KAIROS_ACTIVE_IMAGE, null))));
    return rendered.entrySet().stream().map(e -> Arguments.of(e.getKey(), e.getValue()));
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
    assertTrue(name.startsWith(script.name()), name + " renders " + script.name());
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("scripts")
  void renderedScriptIsValidBash(String name, RemoteScript script) throws Exception {
    GoldenScripts.assertValidBash(name, script);
  }

  @Test
  void kairosTemplatesComeFirstAndTheDistributionsHookStillApplies() {
    HostScripts k0s = new HostScripts(HostDistribution.k0s());
    String inspect = k0s.inspect(HostProfile.k0sDefaults().withOs(HostOs.KAIROS), "k0sworker", List.of(PULLED)).text();
    assertTrue(inspect.contains("kairos-agent is not installed"), "the Kairos inspect");
    assertTrue(inspect.contains("k0s prints its release"), "the k0s version hook");
    String standard = k0s.inspect(HostProfile.k0sDefaults(), "k0sworker", List.of(PULLED)).text();
    assertTrue(!standard.contains("kairos-agent"), "a standard host keeps the common inspect");
  }

  @Test
  void everyRestartScriptReportsAPendingRebootBeforeTouchingTheService() {
    for (HostDistribution d : HostDistribution.all()) {
      String restart = new HostScripts(d).restart(d == HostDistribution.k0s() ? "k0sworker" : "k3s").text();
      int pending = restart.indexOf("echo \"reboot_pending=true\"");
      int systemctl = restart.indexOf("systemctl restart");
      int k0sStart = restart.indexOf("\"$k0s\" start");
      int touch = Math.max(systemctl, k0sStart);
      assertTrue(pending > 0 && pending < touch, d.distribution() + ": " + restart);
      assertEquals(1, restart.split("reboot_pending=true", -1).length - 1, d.distribution().name());
    }
  }
}
