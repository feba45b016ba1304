package dev.inplace.activities.support;

import io.temporal.activity.ActivityExecutionContext;
import io.temporal.client.ActivityCompletionException;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Heartbeats a host step from a side thread while its scripts run, so the step can have a short
 * heartbeat timeout: when the worker dies mid-step, the server sees the heartbeats stop and retries
 * the step within that timeout instead of waiting out the whole start-to-close timeout. The details
 * are the step's resume point ({@code details}), so a beat never overwrites a checkpoint with less.
 * The SDK throttles what reaches the server, so beating often costs nothing.
 */
public final class StepHeartbeat implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(StepHeartbeat.class);

  private final ScheduledExecutorService beats;

  private StepHeartbeat(ScheduledExecutorService beats) {
    this.beats = beats;
  }

  /** Starts beating {@code details} every {@code interval} on {@code context} until closed. */
  public static StepHeartbeat start(ActivityExecutionContext context, Duration interval, Supplier<?> details) {
    ScheduledExecutorService beats = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "step-heartbeat");
      t.setDaemon(true);
      return t;
    });
    StepHeartbeat heartbeat = new StepHeartbeat(beats);
    beats.scheduleAtFixedRate(() -> {
      try {
        context.heartbeat(details.get());
      } catch (ActivityCompletionException e) {
        // Cancelled, timed out or gone on the server: this attempt's result no longer counts; the
        // step's own script deadline still ends it.
        log.debug("step heartbeat stopped: {}", e.toString());
        beats.shutdown();
      } catch (RuntimeException e) {
        log.debug("step heartbeat failed, retrying at the next beat: {}", e.toString());
      }
    }, interval.toMillis(), interval.toMillis(), TimeUnit.MILLISECONDS); // a step done within one interval never beats
    return heartbeat;
  }

  /** A heartbeat that does nothing (outside an activity, as in unit tests of the scripts). */
  public static StepHeartbeat none() {
    return new StepHeartbeat(null);
  }

  @Override
  public void close() {
    if (beats != null) {
      beats.shutdownNow();
    }
  }
}
