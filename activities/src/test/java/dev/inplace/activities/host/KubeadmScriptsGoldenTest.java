package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.NodeRole;
import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Every kubeadm script (the shared steps rendered with the kubeadm layout, and kubeadm's own:
 * install with image import, restart with daemon-reload, the etcdctl snapshot and the upgrade
 * command for the first control plane, another control plane, a worker, and a target before
 * UpgradeConfiguration), rendered from fixed inputs, must equal its golden file byte for byte,
 * start with the step header the sandbox's fault injection relies on, and be valid bash.
 *
 * <p>After an intended change to a template, regenerate the golden files and review the diff:
 *
 * <pre>
 * mvn -B -o -pl activities test -Dtest=KubeadmScriptsGoldenTest -Dgolden.update=true
 * </pre>
 */
class KubeadmScriptsGoldenTest {
  private static final GoldenScripts GOLDEN = new GoldenScripts("kubeadm");

  static final HostProfile PROFILE = HostProfile.kubeadmDefaults();

  static Artifact binary(String name, char digest) {
    return new Artifact(
        name,
        ArtifactKind.BINARY,
        "https://dl.k8s.io/release/v1.31.2/bin/linux/amd64/" + name,
        String.valueOf(digest).repeat(64),
        50_000_000,
        "/usr/bin/" + name,
        "0755");
  }

  static final Artifact IMAGES =
      new Artifact(
          "kubernetes-images",
          ArtifactKind.IMAGE_ARCHIVE,
          "file:/srv/releases/v1.31.2/kubernetes-images-amd64.tar",
          "4444444444444444444444444444444444444444444444444444444444444444",
          300_000_000,
          "/var/lib/inplace/images/kubernetes-images-amd64-v1.31.2.tar",
          "0644");
  static final List<Artifact> ARTIFACTS =
      List.of(binary("kubeadm", '1'), binary("kubelet", '2'), binary("kubectl", '3'), IMAGES);
  static final List<InstalledFile> PREVIOUS =
      List.of(
          new InstalledFile("/usr/bin/kubeadm", "5".repeat(64)),
          new InstalledFile("/usr/bin/kubelet", "6".repeat(64)),
          new InstalledFile("/usr/bin/kubectl", "7".repeat(64)),
          new InstalledFile(IMAGES.installPath(), null));

  static Stream<Arguments> scripts() {
    HostScripts scripts = new HostScripts(HostDistribution.kubeadm());
    Map<String, RemoteScript> rendered = new TreeMap<>();
    rendered.put("inspect", scripts.inspect(PROFILE, "kubelet", ARTIFACTS));
    rendered.put("stage-prepare", scripts.stagePrepare(PROFILE, ARTIFACTS));
    rendered.put("stage-commit", scripts.stageCommit(PROFILE, ARTIFACTS));
    rendered.put("backup", scripts.backup(PROFILE, PREVIOUS.subList(0, 3)));
    rendered.put("install", scripts.install(PROFILE, ARTIFACTS));
    rendered.put("restart", scripts.restart("kubelet"));
    rendered.put("restore", scripts.restore(PROFILE, PREVIOUS));
    rendered.put("etcd-snapshot", scripts.etcdSnapshot(PROFILE, "inplace-pre-v1-31-2"));
    rendered.put("upgrade-apply", scripts.upgrade(PROFILE, NodeRole.CONTROL_PLANE, "v1.31.2", true));
    rendered.put("upgrade-node-control-plane", scripts.upgrade(PROFILE, NodeRole.CONTROL_PLANE, "v1.31.2", false));
    rendered.put("upgrade-node-worker", scripts.upgrade(PROFILE, NodeRole.WORKER, "v1.31.2", false));
    rendered.put("upgrade-apply-before-v1.30", scripts.upgrade(PROFILE, NodeRole.CONTROL_PLANE, "v1.29.10", true));
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

  @org.junit.jupiter.api.Test
  void upgradeUsesUpgradeConfigurationFromV130AndIgnoresTheCoreDnsMigrationChecks() {
    HostScripts scripts = new HostScripts(HostDistribution.kubeadm());
    String modern = scripts.upgrade(PROFILE, NodeRole.CONTROL_PLANE, "v1.30.6", true).text();
    String old = scripts.upgrade(PROFILE, NodeRole.CONTROL_PLANE, "v1.29.10", true).text();
    assertTrue(modern.contains("use_config='true'"), modern);
    assertTrue(old.contains("use_config='false'"), old);
    assertTrue(modern.contains("ignored='CoreDNSUnsupportedPlugins,CoreDNSMigration'"), modern);
    assertTrue(modern.contains("mode='apply'"));
    assertTrue(scripts.upgrade(PROFILE, NodeRole.WORKER, "v1.31.2", false).text().contains("mode='node'"));
  }
}
