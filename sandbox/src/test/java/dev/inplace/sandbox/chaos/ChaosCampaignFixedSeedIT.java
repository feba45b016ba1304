package dev.inplace.sandbox.chaos;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The CI chaos campaign with the fixed seed ({@link CiChaosCampaign}). */
class ChaosCampaignFixedSeedIT {
  private static final long FIXED_SEED = 20261124L;

  @TempDir Path dir;

  @Test
  void everyInvariantHoldsUnderWorkerKillsAndSshDropsForAFixedSeed() {
    CiChaosCampaign.run(dir, FIXED_SEED, "fixed");
  }
}
