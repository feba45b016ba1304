package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The scripts run as root, so no root operation may go through a path someone else controls (issue
 * 34, H1 and H2): each case plants what a pod or a resource writer could (a symbolic link where a
 * script used to write a fixed temporary name, a linked directory, a binary in a container's root
 * filesystem) on a host root, runs the rendered script with bash, and checks what it refused and
 * that the link's target did not change.
 */
class HostScriptsFollowNoLinkTest {
  private static final HostProfile K3S = HostProfile.k3sDefaults();
  private static final String BINARY = "/usr/local/bin/k3s";
  private static final byte[] OLD = "old k3s\n".getBytes(StandardCharsets.UTF_8);
  private static final byte[] NEW = "new k3s\n".getBytes(StandardCharsets.UTF_8);

  @TempDir Path root;
  private final HostScripts scripts = new HostScripts(HostDistribution.k3s());
  private Path victim;

  private record Run(int exit, String out, String err) {}

  @BeforeEach
  void aHostWithK3sAndAFileAnAttackerWantsWritten() throws Exception {
    Files.createDirectories(root.resolve("usr/local/bin"));
    Files.write(host(BINARY), OLD);
    victim = Files.createDirectories(root.resolve("etc")).resolve("shadow");
    Files.writeString(victim, "root:secret\n");
  }

  private Path host(String path) {
    return root.resolve(path.substring(1));
  }

  private Run run(RemoteScript script) throws Exception {
    return run(script, Map.of());
  }

  private Run run(RemoteScript script, Map<String, String> env) throws Exception {
    ProcessBuilder builder = new ProcessBuilder("bash", "-s");
    builder.environment().put("INPLACE_HOST_ROOT", root.toString());
    builder.environment().putAll(env);
    Process bash = builder.start();
    try (var stdin = bash.getOutputStream()) {
      stdin.write(script.text().getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(bash.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(bash.waitFor(30, TimeUnit.SECONDS));
    return new Run(bash.exitValue(), out, err);
  }

  private static String sha256(byte[] bytes) throws Exception {
    return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(bytes));
  }

  private void assertVictimUntouched() throws Exception {
    assertTrue(Files.isRegularFile(victim, java.nio.file.LinkOption.NOFOLLOW_LINKS));
    assertEquals("root:secret\n", Files.readString(victim));
  }

  @Test
  void backupWritesNothingThroughALinkPlantedAtTheOldTemporaryName() throws Exception {
    Path backup = Files.createDirectories(host(K3S.backupDir()));
    Files.createSymbolicLink(backup.resolve("k3s.prev.tmp"), victim);

    Run r = run(scripts.backup(K3S, List.of(new InstalledFile(BINARY, sha256(OLD)))));

    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("backed_up=" + BINARY), r.out());
    assertEquals("old k3s\n", Files.readString(backup.resolve("k3s.prev")));
    assertVictimUntouched();
  }

  @Test
  void backupRefusesABackupDirWithALinkOnTheWayAndWritesNothing() throws Exception {
    Files.createDirectories(root.resolve("var/lib"));
    Files.createSymbolicLink(root.resolve("var/lib/inplace"), root.resolve("etc"));

    Run r = run(scripts.backup(K3S, List.of(new InstalledFile(BINARY, sha256(OLD)))));

    assertEquals(1, r.exit());
    assertTrue(r.err().contains("refusing /var/lib/inplace/backup: /var/lib/inplace is a symbolic link"), r.err());
    assertEquals(List.of(victim), Files.list(root.resolve("etc")).toList());
    assertVictimUntouched();
  }

  @Test
  void backupRefusesAPreviousBackupThatIsALink() throws Exception {
    Path backup = Files.createDirectories(host(K3S.backupDir()));
    Files.createSymbolicLink(backup.resolve("k3s.prev"), victim);

    Run r = run(scripts.backup(K3S, List.of(new InstalledFile(BINARY, sha256(OLD)))));

    assertEquals(1, r.exit());
    assertTrue(r.err().contains("refusing to back up " + BINARY + ": it or /var/lib/inplace/backup/k3s.prev is a"
        + " symbolic link"), r.err());
    assertVictimUntouched();
  }

  @Test
  void restoreDoesNotUseABackupThatIsALinkAndLeavesTheFileAsItIs() throws Exception {
    Files.write(host(BINARY), NEW);
    Path backup = Files.createDirectories(host(K3S.backupDir()));
    Files.writeString(victim, "old k3s\n"); // the link's target even has the digest asked for
    Files.createSymbolicLink(backup.resolve("k3s.prev"), victim);

    Run r = run(scripts.restore(K3S, List.of(new InstalledFile(BINARY, sha256(OLD)))));

    assertEquals(1, r.exit());
    assertTrue(r.err().contains("cannot restore " + BINARY + ": no backup with sha256"), r.err());
    assertEquals("new k3s\n", Files.readString(host(BINARY)));
  }

  /**
   * The backup is swapped between the digest check and the copy (here: by a cp that copies other
   * bytes, as a swap in that window would): the digest is checked on the copy about to be renamed,
   * so the file is left as it was.
   */
  @Test
  void restoreChecksTheDigestOfTheCopyItPutsInPlaceNotOfTheBackupBeforeTheCopy() throws Exception {
    Files.write(host(BINARY), NEW);
    Path backup = Files.createDirectories(host(K3S.backupDir()));
    Files.write(backup.resolve("k3s.prev"), OLD);
    Path shims = Files.createDirectories(root.getParent().resolve(root.getFileName() + "-shims"));
    Path cp = shims.resolve("cp");
    Files.writeString(cp, "#!/bin/bash\nprintf 'swapped\\n' > \"${@: -1}\"\n");
    Files.setPosixFilePermissions(cp, PosixFilePermissions.fromString("rwxr-xr-x"));

    Run r = run(scripts.restore(K3S, List.of(new InstalledFile(BINARY, sha256(OLD)))),
        Map.of("PATH", shims + ":" + System.getenv("PATH")));

    assertEquals(1, r.exit(), r.out());
    assertTrue(r.err().contains("cannot restore " + BINARY), r.err());
    assertEquals("new k3s\n", Files.readString(host(BINARY)));
    try (var left = Files.list(host("/usr/local/bin"))) {
      assertEquals(List.of(host(BINARY)), left.toList(), "no temporary copy is left next to the binary");
    }
  }

  @Test
  void restorePutsTheCheckedBackupInPlace() throws Exception {
    Files.write(host(BINARY), NEW);
    Files.write(Files.createDirectories(host(K3S.backupDir())).resolve("k3s.prev"), OLD);

    Run r = run(scripts.restore(K3S, List.of(new InstalledFile(BINARY, sha256(OLD)))));

    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("restored=" + BINARY), r.out());
    assertEquals("old k3s\n", Files.readString(host(BINARY)));
  }

  @Test
  void stagingRefusesADirectoryWithALinkOnTheWayAndChownsNothing() throws Exception {
    Files.createDirectories(root.resolve("var/lib"));
    Files.createSymbolicLink(root.resolve("var/lib/inplace"), root.resolve("etc"));
    Artifact k3s = new Artifact("k3s", ArtifactKind.BINARY, "https://r.example/k3s", sha256(NEW), NEW.length, BINARY,
        "0755");

    Run r = run(scripts.stagePrepare(K3S, List.of(k3s)), Map.of("SUDO_USER", "nobody"));

    assertEquals(1, r.exit());
    assertTrue(r.err().contains("refusing /var/lib/inplace/staging: /var/lib/inplace is a symbolic link"), r.err());
    assertFalse(Files.exists(root.resolve("etc/staging")), "nothing was created through the link");
    assertEquals(Files.getOwner(root), Files.getOwner(root.resolve("etc")));
  }

  @Test
  void installWritesNothingThroughALinkPlantedAtTheOldTemporaryName() throws Exception {
    Artifact k3s = new Artifact("k3s", ArtifactKind.BINARY, "https://r.example/k3s", sha256(NEW), NEW.length, BINARY,
        "0755");
    Files.write(Files.createDirectories(host(K3S.stagingDir())).resolve(k3s.stagedFileName()), NEW);
    Files.createSymbolicLink(host("/usr/local/bin/.k3s.inplace-tmp"), victim);

    Run r = run(scripts.install(K3S, List.of(k3s)));

    assertEquals(0, r.exit(), r.err());
    assertEquals("new k3s\n", Files.readString(host(BINARY)));
    assertVictimUntouched();
  }

  @Test
  void inspectRefusesABinDirThatIsALinkIntoAContainersRootFilesystemAndRunsNothing() throws Exception {
    Path rootfs = Files.createDirectories(
        root.resolve("run/containerd/io.containerd.runtime.v2.task/k8s.io/0a1b/rootfs/bin"));
    Path evil = rootfs.resolve("k3s");
    Files.writeString(evil, "#!/bin/bash\ntouch \"$INPLACE_HOST_ROOT/ran-as-root\"\necho v9.9.9\n");
    Files.setPosixFilePermissions(evil, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.delete(host(BINARY));
    Files.delete(host("/usr/local/bin"));
    Files.createSymbolicLink(host("/usr/local/bin"), rootfs);

    Run r = run(scripts.inspect(K3S, "k3s", List.of()));

    assertEquals(1, r.exit(), r.out());
    assertTrue(r.err().contains("refusing /usr/local/bin: /usr/local/bin is a symbolic link"), r.err());
    assertFalse(Files.exists(root.resolve("ran-as-root")));
  }

  @Test
  void inspectRefusesAVersionBinaryThatIsALinkAndDoesNotRunIt() throws Exception {
    Path elsewhere = Files.createDirectories(root.resolve("tmp")).resolve("k3s");
    Files.writeString(elsewhere, "#!/bin/bash\ntouch \"$INPLACE_HOST_ROOT/ran-as-root\"\necho v9.9.9\n");
    Files.setPosixFilePermissions(elsewhere, PosixFilePermissions.fromString("rwxr-xr-x"));
    Files.delete(host(BINARY));
    Files.createSymbolicLink(host(BINARY), elsewhere);

    Run r = run(scripts.inspect(K3S, "k3s", List.of()));

    assertEquals(1, r.exit(), r.out());
    assertTrue(r.err().contains("refusing /usr/local/bin/k3s: it is a symbolic link"), r.err());
    assertFalse(Files.exists(root.resolve("ran-as-root")));
  }

  @Test
  void inspectRefusesABinDirOthersMayWrite() throws Exception {
    Files.setPosixFilePermissions(host("/usr/local/bin"), PosixFilePermissions.fromString("rwxrwxrwx"));

    Run r = run(scripts.inspect(K3S, "k3s", List.of()));

    assertEquals(1, r.exit(), r.out());
    assertTrue(r.err().contains("refusing /usr/local/bin: /usr/local/bin is writable by others (mode 777)"), r.err());
  }
}
