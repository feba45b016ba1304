package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WatcherOptionsTest {

  @Test
  void byDefaultTheWatcherRunsInEveryNamespaceBehindALeaseInThePodsNamespace() {
    WatcherOptions options =
        WatcherOptions.fromEnvironment(Map.of("POD_NAMESPACE", "inplace-system", "POD_NAME", "worker-7f9c8-x2")).orElseThrow();

    assertNull(options.namespace());
    assertEquals(Duration.ofSeconds(2), options.statusInterval());
    assertEquals("inplace-system", options.leaderElection().leaseNamespace());
    assertEquals(WatcherOptions.DEFAULT_LEASE_NAME, options.leaderElection().leaseName());
    assertEquals("worker-7f9c8-x2", options.leaderElection().identity());
  }

  @Test
  void theWatcherAndLeaderElectionCanBeSwitchedOff() {
    assertTrue(WatcherOptions.fromEnvironment(Map.of("INPLACE_WATCHER", "false")).isEmpty());
    WatcherOptions single =
        WatcherOptions.fromEnvironment(Map.of("INPLACE_LEADER_ELECTION", "false", "INPLACE_WATCH_NAMESPACE", "fleet"))
            .orElseThrow();
    assertNull(single.leaderElection());
    assertEquals("fleet", single.namespace());
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    IllegalArgumentException e =
        assertThrows(IllegalArgumentException.class, () -> WatcherOptions.fromEnvironment(
            Map.of("INPLACE_WATCHER", "yes", "INPLACE_STATUS_INTERVAL_SECONDS", "0")));
    assertTrue(e.getMessage().contains("INPLACE_WATCHER must be true or false"), e.getMessage());
    assertTrue(e.getMessage().contains("INPLACE_STATUS_INTERVAL_SECONDS"), e.getMessage());
  }

  @Test
  void everyKeyIsDocumentedInTheCrdReference() throws Exception {
    String doc = Files.readString(Path.of("..", "docs", "crd-reference.md"));
    for (String key : WatcherOptions.KEYS) {
      assertTrue(doc.contains("`" + key + "`"), "docs/crd-reference.md does not document " + key);
    }
  }
}
