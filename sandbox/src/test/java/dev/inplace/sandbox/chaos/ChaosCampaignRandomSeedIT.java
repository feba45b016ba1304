package dev.inplace.sandbox.chaos;

import java.nio.file.Path;
import java.util.Random;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CI chaos campaign with a random seed, printed, on Temporal's test server ({@link CiChaosCampaign}). */
class ChaosCampaignRandomSeedIT {
  @TempDir Path dir;

  @Test
  void everyInvariantHoldsUnderWorkerKillsAndSshDropsForARandomSeed() {
    CiChaosCampaign.run(dir, new Random().nextLong(), "random", CiChaosCampaign.Server.TEST_SERVER);
  }
}
