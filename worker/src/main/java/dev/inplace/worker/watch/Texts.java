package dev.inplace.worker.watch;

import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;

/** Small text helpers for status fields. */
final class Texts {
  /** Longest message kept in a status field or condition. */
  static final int MAX_MESSAGE = 1024;

  private Texts() {}

  static String clip(String text) {
    if (text == null || text.length() <= MAX_MESSAGE) {
      return text;
    }
    return text.substring(0, MAX_MESSAGE - 3) + "...";
  }

  /** RFC 3339 at second precision, as Kubernetes writes times; null for 0 (unknown). */
  static String time(long epochMillis) {
    return epochMillis <= 0 ? null : Instant.ofEpochMilli(epochMillis).truncatedTo(ChronoUnit.SECONDS).toString();
  }

  static String time(Instant instant) {
    return instant.truncatedTo(ChronoUnit.SECONDS).toString();
  }

  /** {@code ROLLED_BACK} -> {@code RolledBack}. */
  static String camel(Enum<?> value) {
    if (value == null) {
      return null;
    }
    StringBuilder out = new StringBuilder();
    for (String part : value.name().toLowerCase(Locale.ROOT).split("_")) {
      if (!part.isEmpty()) {
        out.append(Character.toUpperCase(part.charAt(0))).append(part.substring(1));
      }
    }
    return out.toString();
  }
}
