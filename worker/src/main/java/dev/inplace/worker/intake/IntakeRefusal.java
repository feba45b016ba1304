package dev.inplace.worker.intake;

import dev.inplace.workflows.failure.UpgradeFailures;

/**
 * A run the intake will not start, with its failure type from {@code UpgradeFailures} (also the CR
 * condition reason, and named in the hook's Failure message) and a message saying what to fix.
 * Nothing was touched.
 */
public final class IntakeRefusal extends Exception {
  private static final long serialVersionUID = 1L;

  private final String type;

  public IntakeRefusal(String type, String message) {
    super(message, null, false, false);
    this.type = type;
  }

  /** {@code InvalidRequest}: what was asked is wrong in itself. */
  public static IntakeRefusal invalid(String message) {
    return new IntakeRefusal(UpgradeFailures.INVALID_REQUEST, message);
  }

  /** The failure type ({@code UpgradeFailures}). */
  public String type() {
    return type;
  }
}
