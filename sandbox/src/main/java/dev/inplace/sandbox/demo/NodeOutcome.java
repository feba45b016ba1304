package dev.inplace.sandbox.demo;

/** How one node ended in a demo run. */
public record NodeOutcome(
    String node, String machine, String result, String version, String failedStep, String reason, String message) {
  public static final String UPGRADED = "upgraded";
  public static final String ROLLED_BACK = "rolled back";
  public static final String FAILED = "failed";
  public static final String ROLLBACK_FAILED = "rollback failed";
  public static final String NOT_STARTED = "not started";
  public static final String SKIPPED = "skipped";

  public boolean upgraded() {
    return UPGRADED.equals(result);
  }

  public boolean failed() {
    return FAILED.equals(result) || ROLLED_BACK.equals(result) || ROLLBACK_FAILED.equals(result);
  }
}
