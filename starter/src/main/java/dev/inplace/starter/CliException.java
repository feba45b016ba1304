package dev.inplace.starter;

/** A usage error: printed with the usage, exit code 2, nothing was sent to Temporal. */
final class CliException extends RuntimeException {
  CliException(String message) {
    super(message);
  }
}
