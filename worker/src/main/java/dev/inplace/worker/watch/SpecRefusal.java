package dev.inplace.worker.watch;

/**
 * A CR the watcher will not act on, with the condition reason (a failure type of UpgradeFailures or
 * {@link Reasons#CONFLICTING_UPGRADE}) and a message saying what to fix. Nothing was touched.
 */
final class SpecRefusal extends Exception {
  private static final long serialVersionUID = 1L;

  private final String reason;

  SpecRefusal(String reason, String message) {
    super(message, null, false, false);
    this.reason = reason;
  }

  String reason() {
    return reason;
  }
}
