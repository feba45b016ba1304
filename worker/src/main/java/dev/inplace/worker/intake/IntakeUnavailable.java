package dev.inplace.worker.intake;

/** The intake could not read what it checks (API server unreachable, throttled): try again later. */
public final class IntakeUnavailable extends RuntimeException {
  private static final long serialVersionUID = 1L;

  IntakeUnavailable(String message, Throwable cause) {
    super(message, cause);
  }
}
