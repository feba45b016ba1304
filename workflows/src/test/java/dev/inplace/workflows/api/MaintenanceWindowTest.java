package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

class MaintenanceWindowTest {
  /** 2026-01-05 is a Monday. */
  private static long at(String instant) {
    return Instant.parse(instant).toEpochMilli();
  }

  @Test
  void isOpenNowBetweenStartAndEnd() {
    MaintenanceWindow window = new MaintenanceWindow(List.of(), "09:00", "17:00", "UTC");
    assertEquals(Duration.ZERO, window.waitFrom(at("2026-01-05T09:00:00Z")));
    assertEquals(Duration.ZERO, window.waitFrom(at("2026-01-05T16:59:59Z")));
  }

  @Test
  void beforeTheStartWaitsUntilTheStart() {
    MaintenanceWindow window = new MaintenanceWindow(List.of(), "09:00", "17:00", "UTC");
    assertEquals(Duration.ofHours(2), window.waitFrom(at("2026-01-05T07:00:00Z")));
  }

  @Test
  void afterTheEndWaitsForTheNextDay() {
    MaintenanceWindow window = new MaintenanceWindow(List.of(), "09:00", "17:00", "UTC");
    assertEquals(Duration.ofHours(16), window.waitFrom(at("2026-01-05T17:00:00Z")));
  }

  @Test
  void aWindowCrossingMidnightIsOpenOnBothSides() {
    MaintenanceWindow window = new MaintenanceWindow(List.of(), "22:00", "02:00", "UTC");
    assertEquals(Duration.ZERO, window.waitFrom(at("2026-01-05T23:30:00Z")));
    assertEquals(Duration.ZERO, window.waitFrom(at("2026-01-06T01:59:00Z")));
    assertEquals(Duration.ofHours(19), window.waitFrom(at("2026-01-06T03:00:00Z")));
  }

  @Test
  void theDayFilterCountsTheDayTheWindowOpens() {
    MaintenanceWindow saturdays = new MaintenanceWindow(List.of("sat"), "22:00", "02:00", "UTC");
    // Monday 10:00 -> Saturday 22:00.
    assertEquals(Duration.ofDays(5).plusHours(12), saturdays.waitFrom(at("2026-01-05T10:00:00Z")));
    // Sunday 01:00 is still inside the window that opened on Saturday.
    assertEquals(Duration.ZERO, saturdays.waitFrom(at("2026-01-11T01:00:00Z")));
    // Sunday 22:00 is not a Saturday: the next opening is six days later.
    assertEquals(Duration.ofDays(6), saturdays.waitFrom(at("2026-01-11T22:00:00Z")));
  }

  @Test
  void usesItsTimeZone() {
    MaintenanceWindow berlin = new MaintenanceWindow(List.of(), "02:00", "04:00", "Europe/Berlin");
    // 01:30 UTC in January is 02:30 in Berlin.
    assertEquals(Duration.ZERO, berlin.waitFrom(at("2026-01-05T01:30:00Z")));
    assertEquals(Duration.ofMinutes(30), berlin.waitFrom(at("2026-01-05T00:30:00Z")));
  }

  @Test
  void rejectsBadInput() {
    assertRejected(() -> new MaintenanceWindow(List.of(), "25:00", "02:00", "UTC"), "start must be HH:mm");
    assertRejected(() -> new MaintenanceWindow(List.of(), "22:00", "2am", "UTC"), "end must be HH:mm");
    assertRejected(() -> new MaintenanceWindow(List.of("XYZ"), "22:00", "02:00", "UTC"), "unknown day 'XYZ'");
    assertRejected(() -> new MaintenanceWindow(List.of(), "22:00", "22:00", "UTC"), "must differ");
    assertRejected(() -> new MaintenanceWindow(List.of(), "22:00", "02:00", "Mars/Olympus"), "unknown time zone");
  }

  private static void assertRejected(Runnable build, String text) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, build::run);
    assertTrue(e.getMessage().contains(text), e.getMessage());
  }
}
