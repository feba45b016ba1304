package dev.inplace.starter;

/**
 * The command understood its options but refuses what they name (a file the mirror lacks, a host
 * outside the allowlist): printed as {@code inplace: <message>}, exit code 1, nothing changed.
 */
final class CommandRefused extends RuntimeException {
  CommandRefused(String message) {
    super(message);
  }
}
