package dev.inplace.worker.crd;

/** How many nodes the run has and where they stand. */
public class UpgradeCounts {
  private int total;
  private int upgraded;
  private int failed;
  private int skipped;
  private int inFlight;

  public UpgradeCounts() {}

  public UpgradeCounts(int total, int upgraded, int failed, int skipped, int inFlight) {
    this.total = total;
    this.upgraded = upgraded;
    this.failed = failed;
    this.skipped = skipped;
    this.inFlight = inFlight;
  }

  public int getTotal() {
    return total;
  }

  public void setTotal(int total) {
    this.total = total;
  }

  public int getUpgraded() {
    return upgraded;
  }

  public void setUpgraded(int upgraded) {
    this.upgraded = upgraded;
  }

  public int getFailed() {
    return failed;
  }

  public void setFailed(int failed) {
    this.failed = failed;
  }

  public int getSkipped() {
    return skipped;
  }

  public void setSkipped(int skipped) {
    this.skipped = skipped;
  }

  public int getInFlight() {
    return inFlight;
  }

  public void setInFlight(int inFlight) {
    this.inFlight = inFlight;
  }
}
