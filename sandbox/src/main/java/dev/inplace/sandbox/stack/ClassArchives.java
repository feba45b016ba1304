package dev.inplace.sandbox.stack;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.channels.FileChannel;
import java.nio.channels.FileLock;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.List;
import java.util.Optional;

/**
 * Class data sharing for the stack's JVMs: one AppCDS archive per kind of process (worker, temporal;
 * not the estate, see {@link #ARCHIVED_KINDS}) and classpath, written by the first process of that kind that stops cleanly
 * ({@code -XX:ArchiveClassesAtExit}) and mapped by every later one ({@code -XX:SharedArchiveFile}). A
 * JVM that maps its archive neither parses nor verifies the classes in it again: a worker reaches
 * its task queue in about half the time and CPU (docs/benchmarks.md), which is what a worker killed
 * and started again waits for.
 *
 * <p>On when the system property {@value #DIR_PROPERTY} names the directory of the archives (the
 * launcher and the sandbox's failsafe set it under {@code sandbox/target/}, so {@code mvn clean}
 * removes them), and only for a classpath of jars: JDK 17 writes no archive for a classpath with a
 * directory of classes. An archive's name carries a digest of the JVM and of every classpath entry
 * with its size and modification time, so a rebuilt jar gets a new archive instead of a stale one.
 *
 * <p>A process writes its archive first into the stack directory ({@link StackLayout#pendingArchive});
 * it is moved into place only after that process stopped cleanly (SIGTERM, then exit), so an archive
 * cut short by SIGKILL is never used. Two stacks writing the same archive at once (the two failsafe
 * forks) each move a whole one into place; either is right.
 */
final class ClassArchives {
  static final String DIR_PROPERTY = "inplace.cds.dir";

  private final Path dir;
  private final String key;

  private ClassArchives(Path dir, String key) {
    this.dir = dir;
    this.key = key;
  }

  /** As this JVM's system properties say, for processes started with {@code classpath}; off without the property. */
  static ClassArchives forClasspath(List<String> classpath) {
    String configured = System.getProperty(DIR_PROPERTY);
    return in(configured == null || configured.isBlank() ? null : Path.of(configured), classpath);
  }

  /** Archives in {@code dir} (null: off) for processes started with {@code classpath}. */
  static ClassArchives in(Path dir, List<String> classpath) {
    if (dir == null || classpath.stream().anyMatch(e -> Files.isDirectory(Path.of(e)))) {
      return new ClassArchives(null, null);
    }
    return new ClassArchives(dir.toAbsolutePath().normalize(), key(classpath));
  }

  boolean enabled() {
    return dir != null;
  }

  /**
   * The kinds of process that get an archive. Not the estate: JDK 17.0.15's dynamic archive crashed
   * it (SIGSEGV in {@code SystemDictionary::load_shared_lambda_proxy_class}, a lambda of fabric8's
   * {@code KubernetesClientException$RequestMetadata.from} loaded from the archive) in every one of
   * five benchmark runs that mapped an estate archive and met an API error in the estate, leaving
   * the run waiting on a dead cluster (docs/local-stack.md). Its start-up is not what a killed
   * worker waits for, so it does without.
   */
  static final java.util.Set<String> ARCHIVED_KINDS = java.util.Set.of("worker", "temporal");

  /** The archive of {@code kind}'s processes, whether written yet or not; empty when off or for a kind without. */
  Optional<Path> archive(String kind) {
    return enabled() && ARCHIVED_KINDS.contains(kind)
        ? Optional.of(dir.resolve(kind + "-" + key + ".jsa"))
        : Optional.empty();
  }

  /** Whether the processes of {@code kind} still lack their archive (false when off). */
  boolean missing(String kind) {
    return archive(kind).map(a -> !Files.isRegularFile(a)).orElse(false);
  }

  /**
   * Runs {@code write} if {@code kind}'s archive is missing, holding a file lock that other stacks on
   * this machine take too (the sandbox's two failsafe forks start a stack at the same moment): the
   * second one waits for the first one's archive instead of writing its own beside it.
   */
  void whileMissing(String kind, Runnable write) {
    if (!missing(kind)) {
      return;
    }
    Path lock = dir.resolve(kind + "-" + key + ".lock");
    try {
      Files.createDirectories(dir);
      try (FileChannel channel = FileChannel.open(lock, StandardOpenOption.CREATE, StandardOpenOption.WRITE);
          FileLock held = channel.lock()) {
        if (missing(kind)) {
          write.run();
        }
      }
    } catch (IOException e) {
      throw new UncheckedIOException("cannot lock " + lock, e);
    }
  }

  /**
   * The JVM options of the process about to start as {@code role}: map the archive of its kind, or,
   * while there is none, write one when the process exits.
   */
  List<String> options(StackLayout layout, String role) {
    Optional<Path> archive = archive(kind(role));
    if (archive.isEmpty()) {
      return List.of();
    }
    if (Files.isRegularFile(archive.get())) {
      return List.of("-XX:SharedArchiveFile=" + archive.get());
    }
    Path pending = layout.pendingArchive(role);
    try {
      Files.createDirectories(pending.getParent());
      Files.deleteIfExists(pending);
      Files.writeString(target(pending), archive.get().toString());
      Files.createDirectories(archive.get().getParent());
    } catch (IOException e) {
      throw new UncheckedIOException("cannot prepare the class archive of " + role, e);
    }
    return List.of("-XX:ArchiveClassesAtExit=" + pending);
  }

  /**
   * After {@code role}'s process ended: the archive it wrote is moved into place if it stopped
   * cleanly and none is there yet, and dropped otherwise. Static: {@code ./inplace down} runs in
   * another JVM than {@code up}.
   */
  static void ended(StackLayout layout, String role, boolean cleanly) {
    Path pending = layout.pendingArchive(role);
    Path target = target(pending);
    try {
      if (cleanly && Files.isRegularFile(pending) && Files.size(pending) > 0 && Files.isRegularFile(target)) {
        Path archive = Path.of(Files.readString(target).trim());
        if (!Files.exists(archive)) {
          Files.move(pending, archive, StandardCopyOption.ATOMIC_MOVE);
        }
      }
      Files.deleteIfExists(pending);
      Files.deleteIfExists(target);
    } catch (IOException e) {
      // Left behind: the stack's next clean removes it, and the next process of this kind writes one again.
    }
  }

  /** {@code worker-2} -> {@code worker}; {@code temporal}, {@code estate} as they are. */
  static String kind(String role) {
    return role.startsWith("worker-") ? "worker" : role;
  }

  private static Path target(Path pending) {
    return pending.resolveSibling(pending.getFileName() + ".target");
  }

  private static String key(List<String> classpath) {
    try {
      MessageDigest digest = MessageDigest.getInstance("SHA-256");
      update(digest, System.getProperty("java.home") + "|" + System.getProperty("java.vm.version"));
      for (String entry : classpath) {
        Path path = Path.of(entry);
        long size = Files.isRegularFile(path) ? Files.size(path) : -1;
        long modified = Files.exists(path) ? Files.getLastModifiedTime(path).toMillis() : -1;
        update(digest, entry + "|" + size + "|" + modified);
      }
      return HexFormat.of().formatHex(digest.digest()).substring(0, 16);
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read the classpath for the class archives", e);
    }
  }

  private static void update(MessageDigest digest, String text) {
    digest.update(text.getBytes(StandardCharsets.UTF_8));
    digest.update((byte) 0);
  }
}
