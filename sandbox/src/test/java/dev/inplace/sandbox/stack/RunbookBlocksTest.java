package dev.inplace.sandbox.stack;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/**
 * docs/runbook.md's command blocks are exactly those {@link RunbookCommandsIT} runs: a block added,
 * renamed or left unmarked fails here, in the fast tests, before the IT would.
 */
class RunbookBlocksTest {

  @Test
  void everyCommandBlockOfTheRunbookIsMarkedAndRunByTheIt() throws Exception {
    RunbookBlocks blocks = RunbookBlocks.read();
    assertEquals(new TreeSet<>(RunbookCommandsIT.BLOCKS_RUN), new TreeSet<>(blocks.names()));
  }

  @Test
  void theBlocksUseOnlyTheVariablesThePageDefinesAndTheTemporalCli() throws Exception {
    RunbookBlocks blocks = RunbookBlocks.read();
    Set<String> defined = Set.of("CLUSTER", "RUN", "NODE", "NODE_RUN", "SAFE_POINT");
    for (String name : blocks.names()) {
      String block = blocks.block(name);
      var used = java.util.regex.Pattern.compile("\\$([A-Z_]+)").matcher(block);
      while (used.find()) {
        assertTrue(defined.contains(used.group(1)), name + " uses $" + used.group(1) + ", which the page does not define");
      }
      assertTrue(block.lines().allMatch(l -> l.isBlank() || l.startsWith("temporal ") || l.startsWith("SAFE_POINT=")
          || l.startsWith(" ")), name + ": every command is the temporal CLI's:\n" + block);
    }
  }
}
