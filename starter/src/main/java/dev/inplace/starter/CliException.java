package dev.inplace.starter;

/** A usage error found after parsing: printed with the command's usage, exit code 2, nothing sent. */
final class CliException extends RuntimeException {
  CliException(String message) {
    super(message);
  }
}
