package dev.inplace.sandbox.release;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.Distribution;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FakeReleasesTest {
  private static final String VERSION = "v1.30.4+k3s1";

  @TempDir Path dir;

  @Test
  void sameVersionAndSizesGiveIdenticalArtifacts() throws Exception {
    FakeRelease first = new FakeReleases(dir.resolve("a"), FakeReleaseSizes.small()).add(VERSION);
    FakeRelease second = new FakeReleases(dir.resolve("b"), FakeReleaseSizes.small()).add(VERSION);
    assertEquals(first.binary().sha256(), second.binary().sha256());
    assertEquals(first.images().sha256(), second.images().sha256());
    assertEquals(sha256(Path.of(first.binary().source())), first.binary().sha256());
    assertEquals(sha256(Path.of(first.images().source())), first.images().sha256());

    FakeRelease other =
        new FakeReleases(dir.resolve("c"), FakeReleaseSizes.small()).add("v1.31.2+k3s1");
    assertNotEquals(first.binary().sha256(), other.binary().sha256());
  }

  @Test
  void binaryHasTheRequestedSizeAndPrintsItsVersion() throws Exception {
    FakeRelease release = new FakeReleases(dir, new FakeReleaseSizes(100_000, 1000)).add(VERSION);
    Path binary = Path.of(release.binary().source());
    assertEquals(100_000, Files.size(binary));
    assertEquals(100_000, release.binary().sizeBytes());

    List<String> lines = run(binary.toString(), "--version");
    assertEquals(2, lines.size(), lines.toString());
    assertTrue(
        lines.get(0).matches("k3s version v1\\.30\\.4\\+k3s1 \\([0-9a-f]{8}\\)"), lines.get(0));
    assertEquals("go version go1.22.5", lines.get(1));
    assertEquals(List.of(), run(binary.toString(), "server"));

    byte[] bytes = Files.readAllBytes(binary);
    for (byte b : bytes) {
      assertTrue(b == '\n' || (b >= 0x20 && b < 0x7f), "non-printable byte " + b);
    }
  }

  @Test
  void binarySavesAnEtcdSnapshotNamedLikeK3sUnderTheNodeRoot() throws Exception {
    FakeRelease release = new FakeReleases(dir, FakeReleaseSizes.small()).add(VERSION);
    Path nodeRoot = Files.createDirectories(dir.resolve("hosts").resolve("cp-1"));
    long before = System.currentTimeMillis() / 1000;

    List<String> output =
        runIn(
            nodeRoot,
            release.binary().source(),
            "etcd-snapshot",
            "save",
            "--name",
            "inplace-pre-v1.31.2-k3s1");

    Path snapshotDir = nodeRoot.resolve("var/lib/rancher/k3s/server/db/snapshots");
    List<Path> snapshots;
    try (var files = Files.list(snapshotDir)) {
      snapshots = files.toList();
    }
    assertEquals(1, snapshots.size(), snapshots.toString());
    String name = snapshots.get(0).getFileName().toString();
    assertTrue(name.matches("inplace-pre-v1\\.31\\.2-k3s1-cp-1-[0-9]+"), name);
    long seconds = Long.parseLong(name.substring(name.lastIndexOf('-') + 1));
    assertTrue(seconds >= before && seconds <= before + 60, name);
    assertEquals(List.of("INFO[0000] Snapshot " + name + " saved."), output);
    assertEquals(
        "fake etcd snapshot " + name + " of k3s " + VERSION + "\n",
        Files.readString(snapshots.get(0)));
  }

  @Test
  void binaryRefusesAnEtcdSnapshotOnASqliteServerAsK3sDoes() throws Exception {
    FakeRelease release = new FakeReleases(dir, FakeReleaseSizes.small()).add(VERSION);
    Path nodeRoot = Files.createDirectories(dir.resolve("hosts").resolve("cp-0"));
    dev.inplace.sandbox.hosts.K3sDatastore.SQLITE.simulate(nodeRoot);
    ProcessBuilder builder =
        new ProcessBuilder(release.binary().source(), "etcd-snapshot", "save", "--name", "pre").redirectErrorStream(true);
    builder.environment().put("INPLACE_HOST_ROOT", nodeRoot.toString());
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));

    assertEquals(1, p.exitValue(), out);
    assertTrue(out.contains("etcd datastore disabled"), out);
    assertFalse(Files.exists(nodeRoot.resolve("var/lib/rancher/k3s/server/db/snapshots")));
  }

  @Test
  void binaryRefusesASnapshotNameThatIsAPath() throws Exception {
    FakeRelease release = new FakeReleases(dir, FakeReleaseSizes.small()).add(VERSION);
    Path nodeRoot = Files.createDirectories(dir.resolve("hosts").resolve("cp-1"));
    ProcessBuilder builder =
        new ProcessBuilder(
                release.binary().source(), "etcd-snapshot", "save", "--name", "../escape")
            .redirectErrorStream(true);
    builder.environment().put("INPLACE_HOST_ROOT", nodeRoot.toString());
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    assertEquals(1, p.exitValue(), out);
    assertFalse(Files.exists(nodeRoot.resolve("var")));
  }

  @Test
  void imageArchiveIsARealTarNamingTheVersion() throws Exception {
    FakeRelease release = new FakeReleases(dir, FakeReleaseSizes.small()).add(VERSION);
    Path archive = Path.of(release.images().source());
    assertEquals(List.of("manifest.json", "padding.bin"), run("tar", "-tf", archive.toString()));
    List<String> manifest = run("tar", "-xOf", archive.toString(), "manifest.json");
    assertTrue(manifest.get(0).contains("\"k3sVersion\":\"" + VERSION + "\""), manifest.toString());
    List<String> listing = run("tar", "-tvf", archive.toString(), "padding.bin");
    assertTrue(
        listing.get(0).contains(" " + FakeReleaseSizes.small().imagePaddingBytes() + " "),
        listing.toString());
  }

  @Test
  void artifactsFollowTheK3sLayout() {
    FakeRelease release = new FakeReleases(dir, FakeReleaseSizes.small()).add(VERSION);
    Artifact binary = release.binary();
    assertEquals("k3s", binary.name());
    assertEquals(ArtifactKind.BINARY, binary.kind());
    assertEquals("/usr/local/bin/k3s", binary.installPath());
    assertEquals("0755", binary.mode());
    assertTrue(Path.of(binary.source()).isAbsolute());
    Artifact images = release.images();
    assertEquals("k3s-airgap-images", images.name());
    assertEquals(ArtifactKind.IMAGE_ARCHIVE, images.kind());
    assertEquals(
        "/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64-v1.30.4-k3s1.tar",
        images.installPath());
    assertEquals("0644", images.mode());
  }

  @Test
  void catalogueListsReleasesOldestFirstWithEveryArtifactField() throws IOException {
    FakeReleases releases = new FakeReleases(dir, FakeReleaseSizes.small());
    FakeRelease newer = releases.add("v1.31.2+k3s1");
    releases.add(VERSION);
    JsonNode json = new ObjectMapper().readTree(releases.writeCatalogue().toFile());
    JsonNode list = json.get("releases");
    assertEquals(2, list.size());
    assertEquals(VERSION, list.get(0).get("version").asText());
    JsonNode second = list.get(1);
    assertEquals("K3S", second.get("distribution").asText());
    JsonNode binary = second.get("artifacts").get(0);
    assertEquals("k3s", binary.get("name").asText());
    assertEquals("BINARY", binary.get("kind").asText());
    assertEquals(newer.binary().source(), binary.get("source").asText());
    assertEquals(newer.binary().sha256(), binary.get("sha256").asText());
    assertEquals(newer.binary().sizeBytes(), binary.get("sizeBytes").asLong());
    assertEquals("/usr/local/bin/k3s", binary.get("installPath").asText());
    assertEquals("0755", binary.get("mode").asText());
    assertEquals("IMAGE_ARCHIVE", second.get("artifacts").get(1).get("kind").asText());
  }

  @Test
  void catalogueReadsBackThroughTheReleaseCatalogueParser() {
    FakeReleases releases = new FakeReleases(dir, FakeReleaseSizes.small());
    FakeRelease release = releases.add(VERSION);
    java.nio.file.Path file = releases.writeCatalogue();
    ReleaseCatalogue catalogue = ReleaseCatalogue.parse(readString(file), file.toString());
    assertEquals(
        release.artifacts(), catalogue.find(VERSION, Distribution.K3S, "amd64").artifacts());
  }

  @Test
  void versionsThatAreNotStrictK3sVersionsAreRejected() {
    FakeReleases releases = new FakeReleases(dir, FakeReleaseSizes.small());
    assertThrows(IllegalArgumentException.class, () -> releases.add("1.30.4"));
    assertThrows(IllegalArgumentException.class, () -> releases.add("v1.30.4'; rm -rf /"));
    assertThrows(IllegalArgumentException.class, () -> releases.add(" v1.30.4"));
  }

  @Test
  void theFakeK0sReportsItsReleaseDrivesItsServiceAndBacksUpOnARunningController() throws Exception {
    FakeRelease release =
        new FakeReleases(dir.resolve("releases"), FakeReleaseSizes.small(), Distribution.K0S).add("v1.31.2+k0s.0");
    assertEquals("/usr/local/bin/k0s", release.binary().installPath());
    assertTrue(release.images().installPath().startsWith("/var/lib/k0s/images/k0s-airgap-bundle-v1.31.2-k0s.0"),
        release.images().installPath());
    Path root = Files.createDirectories(dir.resolve("node"));
    Path bin = Files.createDirectories(dir.resolve("bin"));
    try (var in = FakeReleasesTest.class.getResourceAsStream("/sandbox-bin/systemctl")) {
      Files.copy(in, bin.resolve("systemctl"));
    }
    bin.resolve("systemctl").toFile().setExecutable(true);
    Path k0s = root.resolve("usr/local/bin/k0s");
    Files.createDirectories(k0s.getParent());
    Files.copy(Path.of(release.binary().source()), k0s);
    k0s.toFile().setExecutable(true);
    Path services = Files.createDirectories(root.resolve("run/sandbox/services"));
    Files.writeString(services.resolve("k0scontroller"), "active\n");
    String path = bin + ":" + System.getenv("PATH");

    assertEquals(List.of("v1.31.2+k0s.0"), k0sIn(root, path, 0, k0s.toString(), "version"));
    assertTrue(k0sIn(root, path, 0, k0s.toString(), "status").contains("Role: controller"));
    Path saveTo = Files.createDirectories(dir.resolve("backups"));
    k0sIn(root, path, 0, k0s.toString(), "backup", "--save-path", saveTo.toString());
    try (var files = Files.list(saveTo)) {
      assertTrue(files.anyMatch(f -> f.getFileName().toString().matches("k0s_backup_.*\\.tar\\.gz")));
    }
    k0sIn(root, path, 0, k0s.toString(), "stop");
    assertEquals("inactive", Files.readString(services.resolve("k0scontroller")).trim());
    k0sIn(root, path, 1, k0s.toString(), "status");
    k0sIn(root, path, 1, k0s.toString(), "backup", "--save-path", saveTo.toString());
    Files.createDirectories(root.resolve(".sandbox/faults"));
    Files.writeString(root.resolve(".sandbox/faults/restart"), "v1.31.2+k0s.0\n");
    k0sIn(root, path, 1, k0s.toString(), "start");
    assertEquals("failed", Files.readString(services.resolve("k0scontroller")).trim(), "an armed restart fault fails k0s start");
    Files.delete(root.resolve(".sandbox/faults/restart"));
    k0sIn(root, path, 0, k0s.toString(), "start");
    assertEquals("active", Files.readString(services.resolve("k0scontroller")).trim());
  }

  private static List<String> k0sIn(Path nodeRoot, String path, int exit, String... command) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("INPLACE_HOST_ROOT", nodeRoot.toString());
    builder.environment().put("PATH", path);
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    assertEquals(exit, p.exitValue(), String.join(" ", command) + ": " + out);
    return out.lines().toList();
  }

  private static List<String> runIn(Path nodeRoot, String... command) throws Exception {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.environment().put("INPLACE_HOST_ROOT", nodeRoot.toString());
    Process p = builder.start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    return out.lines().toList();
  }

  private static List<String> run(String... command) throws Exception {
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(p.waitFor(10, TimeUnit.SECONDS));
    assertEquals(0, p.exitValue(), out);
    return out.lines().toList();
  }

  private static String sha256(Path file) throws Exception {
    return HexFormat.of()
        .formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
  }

  private static String readString(java.nio.file.Path file) {
    try {
      return java.nio.file.Files.readString(file);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }
}
