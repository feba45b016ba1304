package dev.inplace.worker.watch;

/** Something a later attempt may not meet (API server unreachable, throttled): the CR is retried. */
final class TransientProblem extends RuntimeException {
  private static final long serialVersionUID = 1L;

  TransientProblem(String message, Throwable cause) {
    super(message, cause);
  }
}
