package dev.inplace.workflows.api;

import java.util.regex.Pattern;

/** Validation shared by the request records, so a bad request fails at construction, clearly. */
final class Requests {
  private static final Pattern DNS_NAME = Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?");
  private static final Pattern SAFE_PATH = Pattern.compile("/[A-Za-z0-9._+/@-]*");

  private Requests() {}

  static void requireText(String what, String value) {
    if (value == null || value.isBlank()) {
      throw new IllegalArgumentException(what + " is required");
    }
  }

  /** A Kubernetes-style name: also keeps names safe to put in shell scripts and workflow IDs. */
  static void requireName(String what, String value) {
    requireText(what, value);
    if (value.length() > 253 || !DNS_NAME.matcher(value).matches()) {
      throw new IllegalArgumentException(
          what + " must be a lower-case DNS name (a-z, 0-9, '-', '.'), got '" + value + "'");
    }
  }

  /** An absolute path made only of characters that need no quoting in a shell. */
  static void requireAbsolutePath(String what, String value) {
    requireText(what, value);
    if (!SAFE_PATH.matcher(value).matches() || value.contains("/../") || value.endsWith("/..")) {
      throw new IllegalArgumentException(
          what + " must be an absolute path of [A-Za-z0-9._+/@-] without '..', got '" + value + "'");
    }
  }
}
