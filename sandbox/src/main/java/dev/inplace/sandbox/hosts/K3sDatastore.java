package dev.inplace.sandbox.hosts;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The datastore a simulated k3s server keeps under {@code /var/lib/rancher/k3s/server/db}, which the
 * snapshot script observes: embedded etcd (a {@code db/etcd} directory, as with {@code
 * --cluster-init} or more than one server) or SQLite (a single server's default: {@code state.db}
 * with its {@code -wal} and {@code -shm}). The fake k3s refuses {@code etcd-snapshot} on SQLite, as
 * k3s does.
 */
public enum K3sDatastore {
  EMBEDDED_ETCD,
  SQLITE;

  public static final String DB_DIR = "var/lib/rancher/k3s/server/db";

  /** Lays the datastore out under the host root {@code root}. */
  public void simulate(Path root) {
    Path db = root.resolve(DB_DIR);
    try {
      Files.createDirectories(db);
      if (this == EMBEDDED_ETCD) {
        Files.createDirectories(db.resolve("etcd/member"));
        return;
      }
      // Not a real database: the snapshot copies the files, it never opens them.
      Files.writeString(db.resolve("state.db"), "SQLite format 3 (sandbox stand-in for k3s's kine datastore)\n",
          StandardCharsets.US_ASCII);
      Files.writeString(db.resolve("state.db-wal"), "sandbox write-ahead log\n", StandardCharsets.US_ASCII);
      Files.writeString(db.resolve("state.db-shm"), "sandbox shared memory index\n", StandardCharsets.US_ASCII);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot lay out the k3s datastore under " + root, e);
    }
  }
}
