package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.stack.StackLayout;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

/**
 * The CI-sized chaos campaign (docs/reliability.md): 6 nodes on the local stack of processes, 8
 * worker kills, 10% of SSH connections dropped, and its checks. Run once with a fixed seed on the real
 * Temporal server, killed once mid-run and started again on its database ({@link
 * ChaosCampaignFixedSeedIT}), and once with a random seed on Temporal's test server ({@link
 * ChaosCampaignRandomSeedIT}), two classes so that the sandbox's two failsafe forks can run them side
 * by side; the seed is printed so a failure reproduces with the command it prints.
 */
final class CiChaosCampaign {
  private CiChaosCampaign() {}

  /** The Temporal server's part of a campaign: which server, and how often it is killed. */
  record Server(String temporal, int kills) {
    static final Server TEST_SERVER = new Server("test-server", 0);

    List<String> args() {
      return List.of("--temporal", temporal, "--kill-temporal", Integer.toString(kills));
    }
  }

  static void run(Path dir, long seed, String which, Server server) {
    List<String> args = new ArrayList<>(List.of(
        "--nodes", "6", "--kills", "8", "--ssh-drop", "10", "--seed", Long.toString(seed)));
    args.addAll(server.args());
    System.out.printf("CI chaos campaign: %s seed %d (reproduce: ./inplace chaos %s)%n", which, seed, String.join(" ", args));
    args.addAll(List.of("--deadline", "420"));
    ChaosOptions options = ChaosOptions.parse(args.toArray(String[]::new));
    ByteArrayOutputStream printed = new ByteArrayOutputStream();
    PrintStream out = new PrintStream(printed, true, StandardCharsets.UTF_8);
    ChaosSummary summary = ChaosCampaign.run(new StackLayout(dir.resolve(which)), options, out);
    String output = printed.toString(StandardCharsets.UTF_8);
    System.out.println("CI chaos campaign: " + summary);

    assertTrue(summary.passed(), "seed " + seed + ": " + summary.violations() + "\n" + output);
    assertEquals(8, summary.kills(), output);
    assertTrue(summary.killsMidActivity() * 3 >= summary.kills(), "kills mid-activity: " + summary + "\n" + output);
    assertEquals(6, summary.upgraded(), output);
    assertEquals(0, summary.duplicateDestructive(), output);
    assertEquals(0, summary.wrongDigestStarts(), output);
    assertEquals(0, summary.leftCordoned(), output);
    assertEquals(server.temporal(), summary.temporal(), output);
    assertEquals(server.kills(), summary.temporalKills(), output);
    // Each server kill landed while the runs had work in flight, and the server served again.
    assertTrue(summary.temporalKillLog().stream().allMatch(k -> k.activitiesInFlight() > 0), output);
  }
}
