package dev.inplace.workflows.testing;

import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.api.history.v1.MarkerRecordedEventAttributes;
import io.temporal.common.WorkflowExecutionHistory;
import io.temporal.common.converter.DefaultDataConverter;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.WorkflowReplayer;
import io.temporal.worker.Worker;
import io.temporal.worker.WorkerOptions;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Stream;

/**
 * The committed replay histories (src/test/resources/histories) and their manifest. Fixtures are
 * append-only: a history records what a released worker did, so it is never rewritten. A
 * deliberately versioned change gets a new fixture under a new name, recorded here, which also
 * appends its sha256 to {@link #MANIFEST} (the format of {@code sha256sum}, so {@code sha256sum -c
 * MANIFEST.sha256} checks it too).
 */
public final class HistoryFixtures {
  public static final Path DIR = Path.of("src/test/resources/histories");
  public static final Path MANIFEST = DIR.resolve("MANIFEST.sha256");

  private HistoryFixtures() {}

  /** Every committed fixture file (*.json), sorted by name. */
  public static List<Path> all() throws IOException {
    try (Stream<Path> files = Files.list(DIR)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".json")).sorted().toList();
    }
  }

  /** Fixtures whose name starts with {@code prefix}, sorted. */
  public static List<Path> withPrefix(String prefix) throws IOException {
    return all().stream().filter(p -> p.getFileName().toString().startsWith(prefix)).toList();
  }

  public static WorkflowExecutionHistory read(Path fixture) throws IOException {
    return WorkflowExecutionHistory.fromJson(Files.readString(fixture));
  }

  /** File name to sha256 (hex), as the manifest lists them, in manifest order. */
  public static Map<String, String> manifest() throws IOException {
    Map<String, String> listed = new LinkedHashMap<>();
    for (String line : Files.readAllLines(MANIFEST)) {
      if (line.isBlank() || line.startsWith("#")) {
        continue;
      }
      String[] parts = line.trim().split("\\s+", 2);
      if (parts.length != 2 || parts[0].length() != 64) {
        throw new IllegalStateException("malformed line in " + MANIFEST + ": '" + line + "'");
      }
      listed.put(parts[1].startsWith("*") ? parts[1].substring(1) : parts[1], parts[0]);
    }
    return listed;
  }

  public static String sha256(Path file) throws IOException {
    try {
      return HexFormat.of().formatHex(MessageDigest.getInstance("SHA-256").digest(Files.readAllBytes(file)));
    } catch (NoSuchAlgorithmException e) {
      throw new IllegalStateException(e);
    }
  }

  /**
   * Writes the history of a finished run as a new fixture and lists it in the manifest. Refuses to
   * overwrite: a committed fixture is never rewritten (pick a new name for the new behaviour).
   */
  /** The workflow ID a fixture's run is recorded under, which its replay uses: the file's name. */
  public static String idOf(String file) {
    return file.substring(0, file.length() - ".json".length());
  }

  /** Records the last run of the workflow {@link #idOf} the file names. */
  public static void recordUnderItsId(TestWorkflowEnvironment env, String file) {
    try {
      record(env, idOf(file), null, file);
    } catch (IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
  }

  public static void record(TestWorkflowEnvironment env, String workflowId, String runId, String file)
      throws IOException {
    Path target = DIR.resolve(file);
    if (Files.exists(target) || manifest().containsKey(file)) {
      throw new IllegalStateException(
          target + " is a committed replay fixture and fixtures are append-only: record the new"
              + " behaviour under a new file name instead of rewriting it");
    }
    WorkflowExecutionHistory history = runId == null
        ? env.getWorkflowClient().fetchHistory(workflowId)
        : env.getWorkflowClient().fetchHistory(workflowId, runId);
    Files.writeString(target, history.toJson(true));
    Files.writeString(MANIFEST, sha256(target) + "  " + file + "\n", StandardCharsets.UTF_8,
        StandardOpenOption.APPEND);
  }

  /**
   * Replays a fixture against an implementation and fails on non-determinism. The worker allows a
   * workflow task 10 s before it reports a deadlock (the default 1 s trips on a loaded build machine
   * while the first task loads classes; determinism does not depend on it). The run replays under
   * the fixture's file name as its workflow ID (a history does not carry its own): a path that
   * depends on the ID, such as releasing a cordon an earlier run of the same ID left, is recorded
   * under that name.
   */
  public static void replay(Path fixture, Class<?> implementation) throws Exception {
    TestWorkflowEnvironment env = TestWorkflowEnvironment.newInstance();
    try {
      Worker worker = env.newWorker("replay-" + implementation.getSimpleName(),
          WorkerOptions.newBuilder().setDefaultDeadlockDetectionTimeout(10_000).build());
      worker.registerWorkflowImplementationTypes(implementation);
      String name = fixture.getFileName().toString();
      WorkflowReplayer.replayWorkflowExecution(
          WorkflowExecutionHistory.fromJson(Files.readString(fixture), name.substring(0, name.length() - ".json".length())),
          worker);
    } finally {
      env.close();
    }
  }

  /**
   * Skips a recording test whose fixtures are all committed already: they are never rewritten, so
   * {@code -Dhistories.update=true} records only the new ones.
   */
  public static void assumeNotRecorded(String... files) {
    boolean all = true;
    for (String file : files) {
      all &= Files.exists(DIR.resolve(file));
    }
    org.junit.jupiter.api.Assumptions.assumeFalse(all, "already recorded (fixtures are append-only): " + List.of(files));
  }

  /** The version markers of a history: change ID to the version recorded. */
  public static Map<String, Integer> versionMarkers(WorkflowExecutionHistory history) {
    Map<String, Integer> markers = new TreeMap<>();
    for (HistoryEvent event : history.getEvents()) {
      if (!event.hasMarkerRecordedEventAttributes()) {
        continue;
      }
      MarkerRecordedEventAttributes marker = event.getMarkerRecordedEventAttributes();
      if (!"Version".equals(marker.getMarkerName())) {
        continue;
      }
      var converter = DefaultDataConverter.STANDARD_INSTANCE;
      String changeId = converter.fromPayload(
          marker.getDetailsOrThrow("changeId").getPayloads(0), String.class, String.class);
      Integer version = converter.fromPayload(
          marker.getDetailsOrThrow("version").getPayloads(0), Integer.class, Integer.class);
      markers.put(changeId, version);
    }
    return markers;
  }
}
