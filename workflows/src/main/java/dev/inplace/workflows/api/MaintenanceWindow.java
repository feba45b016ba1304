package dev.inplace.workflows.api;

import java.time.DayOfWeek;
import java.time.Duration;
import java.time.Instant;
import java.time.LocalTime;
import java.time.ZoneId;
import java.time.ZonedDateTime;
import java.util.List;
import java.util.Locale;

/**
 * When new nodes may start: on {@code days} (empty = every day) between {@code start} and {@code
 * end} (HH:mm, end may be past midnight) in {@code timeZone}. Nodes already started may finish
 * after the end. Pure computation on a given instant, so workflows stay deterministic.
 */
public record MaintenanceWindow(List<String> days, String start, String end, String timeZone) {
  public MaintenanceWindow {
    days = days == null ? List.of() : days.stream().map(d -> d.toUpperCase(Locale.ROOT)).toList();
    for (String d : days) {
      dayOf(d);
    }
    time("start", start);
    time("end", end);
    if (start.equals(end)) {
      throw new IllegalArgumentException("maintenance window start and end must differ");
    }
    try {
      ZoneId.of(timeZone == null ? "UTC" : timeZone);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("unknown time zone '" + timeZone + "'");
    }
    timeZone = timeZone == null ? "UTC" : timeZone;
  }

  /** How long from {@code epochMillis} until the window is open; zero when it is open now. */
  public Duration waitFrom(long epochMillis) {
    ZonedDateTime now = Instant.ofEpochMilli(epochMillis).atZone(ZoneId.of(timeZone));
    LocalTime from = time("start", start);
    LocalTime to = time("end", end);
    // Look at the window opening yesterday too: one that crosses midnight may still be open.
    for (int offset = -1; offset <= 8; offset++) {
      ZonedDateTime open = now.toLocalDate().plusDays(offset).atTime(from).atZone(now.getZone());
      if (!allowed(open.getDayOfWeek())) {
        continue;
      }
      ZonedDateTime close = open.toLocalDate().atTime(to).atZone(now.getZone());
      if (!close.isAfter(open)) {
        close = close.plusDays(1);
      }
      if (!now.isBefore(open) && now.isBefore(close)) {
        return Duration.ZERO;
      }
      if (open.isAfter(now)) {
        return Duration.between(now, open);
      }
    }
    throw new IllegalStateException("maintenance window never opens: " + this);
  }

  private boolean allowed(DayOfWeek day) {
    return days.isEmpty() || days.stream().anyMatch(d -> dayOf(d) == day);
  }

  private static DayOfWeek dayOf(String text) {
    for (DayOfWeek d : DayOfWeek.values()) {
      if (d.name().startsWith(text) && text.length() >= 3) {
        return d;
      }
    }
    throw new IllegalArgumentException("unknown day '" + text + "' (use MON..SUN)");
  }

  private static LocalTime time(String what, String text) {
    try {
      return LocalTime.parse(text);
    } catch (RuntimeException e) {
      throw new IllegalArgumentException("maintenance window " + what + " must be HH:mm, got '" + text + "'");
    }
  }
}
