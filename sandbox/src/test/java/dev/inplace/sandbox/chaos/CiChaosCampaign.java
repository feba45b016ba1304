package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.stack.StackLayout;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;

/**
 * The CI-sized chaos campaign (docs/reliability.md): 6 nodes on the local stack of processes, 8
 * worker kills, 10% of SSH connections dropped, and its checks. Run once with a fixed seed
 * ({@link ChaosCampaignFixedSeedIT}) and once with a random one ({@link ChaosCampaignRandomSeedIT}),
 * two classes so that the sandbox's two failsafe forks can run them side by side; the seed is printed
 * so a failure reproduces with {@code ./inplace chaos --nodes 6 --kills 8 --ssh-drop 10 --seed S}.
 */
final class CiChaosCampaign {
  private CiChaosCampaign() {}

  static void run(Path dir, long seed, String which) {
    System.out.printf("CI chaos campaign: %s seed %d (reproduce: ./inplace chaos --nodes 6 --kills 8 --ssh-drop 10 --seed %d)%n",
        which, seed, seed);
    ChaosOptions options = ChaosOptions.parse(
        "--nodes", "6", "--kills", "8", "--ssh-drop", "10", "--seed", Long.toString(seed), "--deadline", "420");
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
  }
}
