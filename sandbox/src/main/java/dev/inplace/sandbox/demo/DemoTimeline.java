package dev.inplace.sandbox.demo;

import io.temporal.api.history.v1.HistoryEvent;
import io.temporal.client.WorkflowClient;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The demo's runs as one timeline, read from their Temporal histories: one line per event, seconds
 * since the demo started, the run, the event and its activity (or child run). Written when
 * {@code INPLACE_DEMO_TIMELINE} names a file (by the demo, and by {@code bench --e2e} for its timed
 * WorkersUpgrade); it is how docs/benchmarks.md says where the time goes (which step, which gap
 * between runs, how long an activity waited for a worker).
 */
public final class DemoTimeline {
  public static final String ENV = "INPLACE_DEMO_TIMELINE";

  private DemoTimeline() {}

  /** One line per event of one run: {@code seconds workflowId EVENT [activity type or child ID]}. */
  static List<String> lines(String workflowId, List<HistoryEvent> events, long zeroMillis) {
    Map<Long, String> activities = new HashMap<>();
    List<String> lines = new ArrayList<>();
    for (HistoryEvent e : events) {
      long millis = e.getEventTime().getSeconds() * 1000 + e.getEventTime().getNanos() / 1_000_000 - zeroMillis;
      String what = e.getEventType().name().replaceFirst("^EVENT_TYPE_", "");
      String detail = null;
      if (e.hasActivityTaskScheduledEventAttributes()) {
        detail = e.getActivityTaskScheduledEventAttributes().getActivityType().getName();
        activities.put(e.getEventId(), detail);
      } else if (e.hasActivityTaskStartedEventAttributes()) {
        detail = activities.get(e.getActivityTaskStartedEventAttributes().getScheduledEventId());
      } else if (e.hasActivityTaskCompletedEventAttributes()) {
        detail = activities.get(e.getActivityTaskCompletedEventAttributes().getScheduledEventId());
      } else if (e.hasActivityTaskFailedEventAttributes()) {
        detail = activities.get(e.getActivityTaskFailedEventAttributes().getScheduledEventId());
      } else if (e.hasStartChildWorkflowExecutionInitiatedEventAttributes()) {
        detail = e.getStartChildWorkflowExecutionInitiatedEventAttributes().getWorkflowId();
      }
      lines.add(String.format(Locale.ROOT, "%8.3f %s %s%s", millis / 1000.0, workflowId, what, detail == null ? "" : " " + detail));
    }
    return lines;
  }

  /** Writes the timeline of every run in {@code workflowIds} (each ID's latest run) to {@code file}. */
  public static void write(Path file, WorkflowClient client, Collection<String> workflowIds, long zeroMillis) {
    List<String> all = new ArrayList<>();
    for (String id : workflowIds) {
      all.addAll(lines(id, client.fetchHistory(id).getEvents(), zeroMillis));
    }
    try {
      Files.write(file, all);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write the demo timeline " + file, e);
    }
  }
}
