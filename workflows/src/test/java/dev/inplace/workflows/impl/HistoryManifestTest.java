package dev.inplace.workflows.impl;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.inplace.workflows.testing.HistoryFixtures;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * Committed replay histories are append-only: each is what a released worker did, and rewriting one
 * hides a change that breaks runs in flight. The manifest lists every fixture's sha256.
 */
class HistoryManifestTest {
  private static final String APPEND_ONLY =
      "replay fixtures are append-only: restore it from git (git checkout -- <file>) and record the"
          + " new behaviour as a new fixture under a new name (HistoryFixtures.record), behind Workflow.getVersion";

  @Test
  void listedFixturesAreUnchangedAndPresent() throws Exception {
    Map<String, String> listed = HistoryFixtures.manifest();
    assertTrue(listed.size() >= 14, "manifest lists " + listed.keySet());
    List<String> problems = new ArrayList<>();
    for (Map.Entry<String, String> entry : listed.entrySet()) {
      Path file = HistoryFixtures.DIR.resolve(entry.getKey());
      if (!Files.exists(file)) {
        problems.add(entry.getKey() + " disappeared");
      } else if (!HistoryFixtures.sha256(file).equals(entry.getValue())) {
        problems.add(entry.getKey() + " changed (sha256 " + HistoryFixtures.sha256(file) + ", listed "
            + entry.getValue() + ")");
      }
    }
    if (!problems.isEmpty()) {
      fail(String.join("; ", problems) + ": " + APPEND_ONLY);
    }
  }

  @Test
  void everyFixtureIsListed() throws Exception {
    Map<String, String> listed = HistoryFixtures.manifest();
    List<String> unlisted = HistoryFixtures.all().stream()
        .map(p -> p.getFileName().toString())
        .filter(name -> !listed.containsKey(name))
        .toList();
    assertEquals(List.of(), unlisted,
        "fixtures missing from " + HistoryFixtures.MANIFEST + ": append their line (sha256sum FILE >> MANIFEST.sha256)");
  }

  @Test
  void aRewrittenFixtureIsReportedAsChanged(@org.junit.jupiter.api.io.TempDir Path dir) throws Exception {
    // The check itself can fail: the hash of a rewritten file differs from the one listed.
    Path fixture = HistoryFixtures.all().get(0);
    Path copy = dir.resolve("copy.json");
    Files.writeString(copy, Files.readString(fixture).replaceFirst("\"eventId\": \"1\"", "\"eventId\": \"1\" "));
    String listed = HistoryFixtures.manifest().get(fixture.getFileName().toString());
    assertEquals(listed, HistoryFixtures.sha256(fixture));
    assertTrue(!listed.equals(HistoryFixtures.sha256(copy)), "a rewritten fixture kept its hash");
  }
}
