package dev.inplace.starter;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** The command tree without Temporal: help everywhere, completion, and the exit codes before a run. */
class CommandTreeTest {
  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(Map<String, String> env, String... args) {
    return InplaceCli.run(args, env, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private static List<List<String>> paths(CommandLine command, List<String> prefix) {
    List<List<String>> all = new ArrayList<>();
    all.add(prefix);
    command.getSubcommands().forEach((name, sub) -> {
      List<String> path = new ArrayList<>(prefix);
      path.add(name);
      all.addAll(paths(sub, path));
    });
    return all;
  }

  @Test
  void everyCommandAndSubcommandAnswersHelpWithItsOwnUsage() {
    PrintStream discard = new PrintStream(PrintStream.nullOutputStream());
    List<List<String>> paths = paths(InplaceCli.commandLine(CliContext.of(null, "q", discard, 0), discard), List.of());
    assertTrue(paths.size() >= 13, paths.toString());
    for (List<String> path : paths) {
      if (path.contains("help")) {
        continue;
      }
      out.reset();
      List<String> args = new ArrayList<>(path);
      args.add("--help");
      assertEquals(0, run(Map.of(), args.toArray(String[]::new)), path + ": " + err);
      String expected = "Usage: " + String.join(" ", (Iterable<String>) () -> java.util.stream.Stream.concat(
          java.util.stream.Stream.of("inplace"), path.stream()).iterator());
      assertTrue(out.toString(StandardCharsets.UTF_8).startsWith(expected), path + ": " + out);
    }
    out.reset();
    assertEquals(0, run(Map.of(), "help", "status"));
    assertTrue(out.toString().startsWith("Usage: inplace status"), out.toString());
  }

  @Test
  void noCommandOrAMissingSubcommandIsAUsageError() {
    assertEquals(2, run(Map.of()));
    assertEquals(2, run(Map.of(), "upgrade"));
    assertTrue(err.toString().contains("inplace upgrade: Missing required subcommand"), err.toString());
  }

  @Test
  void completionPrintsABashScriptForTheWholeTree() {
    assertEquals(0, run(Map.of(), "completion", "bash"));
    String script = out.toString(StandardCharsets.UTF_8);
    assertTrue(script.contains("complete -F _complete_inplace"), script.substring(0, Math.min(400, script.length())));
    assertTrue(script.contains("--machine-deployment"), "workers options completed");
    assertTrue(script.contains("kubeadm"), "distribution candidates completed");
    assertEquals(2, run(Map.of(), "completion", "fish"));
  }

  @Test
  void withoutATemporalAddressItSaysWhatToSetAndExitsTwo() {
    assertEquals(2, run(Map.of(), "status", "cp-upgrade/fleet/edge-1/v1"));
    assertTrue(err.toString().contains("TEMPORAL_ADDRESS"), err.toString());
  }

  @Test
  void aMistypedRunIdIsAUsageErrorNamingTheKindsOfIdBeforeAnyConnection() {
    // Nothing listens on port 1: had the CLI connected first, these would exit 3.
    Map<String, String> unreachable = Map.of("TEMPORAL_ADDRESS", "127.0.0.1:1");
    assertEquals(2, run(unreachable, "status", "edge-1"));
    assertTrue(err.toString().contains("'edge-1' is not a cp-upgrade/, workers-upgrade/, node-upgrade/ or node-upgrade-hook/ workflow ID"),
        err.toString());
    assertTrue(err.toString().contains("Usage: inplace status"), err.toString());
    assertEquals(2, run(unreachable, "watch", "edge-1"));
    assertEquals(2, run(unreachable, "pause", "node-upgrade/fleet/edge-1-cp-0/v1.31.2"));
    assertTrue(err.toString().contains("is not a cp-upgrade/ or workers-upgrade/ workflow ID"), err.toString());
    assertFalse(err.toString().contains("cannot connect to Temporal"), err.toString());
  }

  @Test
  void anUnreachableFrontendExitsThree() {
    // Port 1 on loopback: nothing listens, the connection is refused.
    assertEquals(3, run(Map.of("TEMPORAL_ADDRESS", "127.0.0.1:1"), "status", "cp-upgrade/fleet/edge-1/v1"));
    assertTrue(err.toString().contains("cannot connect to Temporal at 127.0.0.1:1"), err.toString());
  }
}
