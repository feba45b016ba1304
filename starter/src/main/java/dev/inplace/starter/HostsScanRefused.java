package dev.inplace.starter;

/** {@code hosts scan} refused to write: the message says why; the known_hosts Secret was not changed (exit 1). */
final class HostsScanRefused extends RuntimeException {
  HostsScanRefused(String message) {
    super(message);
  }
}
