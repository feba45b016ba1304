package dev.inplace.sandbox.chaos;

import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The CI chaos campaign with the fixed seed on the real Temporal server (the test bed's dev server),
 * which is killed with SIGKILL once mid-run and started again on the same database ({@link
 * CiChaosCampaign}).
 */
class ChaosCampaignFixedSeedIT {
  private static final long FIXED_SEED = 20261124L;

  @TempDir Path dir;

  @Test
  void everyInvariantHoldsUnderWorkerKillsSshDropsAndAKillOfTheTemporalServerForAFixedSeed() {
    CiChaosCampaign.run(dir, FIXED_SEED, "fixed", new CiChaosCampaign.Server("dev-server", 1));
  }
}
