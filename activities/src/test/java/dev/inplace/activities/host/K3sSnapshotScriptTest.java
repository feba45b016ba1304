package dev.inplace.activities.host;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.activities.ssh.RemoteScript;
import dev.inplace.workflows.api.HostProfile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The k3s snapshot script run with bash against a host root: it observes the datastore and takes
 * the matching snapshot (a SQLite copy, or {@code k3s etcd-snapshot save} with embedded etcd).
 */
class K3sSnapshotScriptTest {
  private static final String DB = "var/lib/rancher/k3s/server/db";
  @TempDir Path root;

  private record Run(int exit, String out, String err) {}

  private Run run() throws Exception {
    RemoteScript script = new HostScripts(HostDistribution.k3s()).etcdSnapshot(HostProfile.k3sDefaults(), "inplace-pre-v1.31.2-k3s1");
    ProcessBuilder builder = new ProcessBuilder("bash", "-s");
    builder.environment().put("INPLACE_HOST_ROOT", root.toString());
    Process bash = builder.start();
    try (var stdin = bash.getOutputStream()) {
      stdin.write(script.text().getBytes(StandardCharsets.UTF_8));
    }
    String out = new String(bash.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    String err = new String(bash.getErrorStream().readAllBytes(), StandardCharsets.UTF_8);
    assertTrue(bash.waitFor(30, TimeUnit.SECONDS));
    return new Run(bash.exitValue(), out, err);
  }

  /** A k3s that records each call and, like k3s, refuses etcd-snapshot without embedded etcd. */
  private void fakeK3s() throws Exception {
    Path bin = Files.createDirectories(root.resolve("usr/local/bin")).resolve("k3s");
    Files.writeString(bin, """
        #!/bin/bash
        echo "$*" >> "$INPLACE_HOST_ROOT/k3s.calls"
        [ -d "$INPLACE_HOST_ROOT/%s/etcd" ] || { echo 'level=fatal msg="etcd datastore disabled"' >&2; exit 1; }
        mkdir -p "$INPLACE_HOST_ROOT/%s/snapshots"
        echo snap > "$INPLACE_HOST_ROOT/%s/snapshots/$4-node-1700000000"
        """.formatted(DB, DB, DB));
    Files.setPosixFilePermissions(bin, PosixFilePermissions.fromString("rwxr-xr-x"));
  }

  @Test
  void aSingleServerOnSqliteGetsACopyOfStateDbWithItsWalAndShmAndK3sIsNotAsked() throws Exception {
    fakeK3s();
    Path db = Files.createDirectories(root.resolve(DB));
    Files.writeString(db.resolve("state.db"), "db");
    Files.writeString(db.resolve("state.db-wal"), "wal");
    Files.writeString(db.resolve("state.db-shm"), "shm");

    Run first = run();

    assertEquals(0, first.exit(), first.err());
    assertTrue(first.out().contains("datastore=sqlite"), first.out());
    assertTrue(first.out().contains("already_taken=false"), first.out());
    String snapshot = first.out().lines().filter(l -> l.startsWith("snapshot=")).findFirst().orElseThrow().substring(9);
    assertTrue(snapshot.startsWith("/" + DB + "/snapshots/inplace-pre-v1.31.2-k3s1-") && snapshot.endsWith(".sqlite.tar"), snapshot);
    Process list = new ProcessBuilder("tar", "-tf", root + snapshot).start();
    List<String> files = new String(list.getInputStream().readAllBytes(), StandardCharsets.UTF_8).lines().sorted().toList();
    assertEquals(List.of("state.db", "state.db-shm", "state.db-wal"), files);
    assertFalse(Files.exists(root.resolve("k3s.calls")), "k3s etcd-snapshot is for embedded etcd only");

    Run again = run();
    assertEquals(0, again.exit(), again.err());
    assertTrue(again.out().contains("snapshot=" + snapshot) && again.out().contains("already_taken=true"), again.out());
  }

  @Test
  void embeddedEtcdGetsK3sEtcdSnapshotSave() throws Exception {
    fakeK3s();
    Files.createDirectories(root.resolve(DB).resolve("etcd"));
    Files.writeString(root.resolve(DB).resolve("state.db"), "left from before --cluster-init");

    Run r = run();

    assertEquals(0, r.exit(), r.err());
    assertTrue(r.out().contains("datastore=etcd"), r.out());
    assertTrue(r.out().contains("snapshot=/" + DB + "/snapshots/inplace-pre-v1.31.2-k3s1-node-1700000000"), r.out());
    assertEquals(List.of("etcd-snapshot save --name inplace-pre-v1.31.2-k3s1"), Files.readAllLines(root.resolve("k3s.calls")));
  }
}
