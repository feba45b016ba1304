package dev.inplace.worker.extension;

/** A request that cannot be answered as asked (malformed, missing fields): answered with Failure and this message. */
final class BadRequest extends RuntimeException {
  BadRequest(String message) {
    super(message);
  }
}
