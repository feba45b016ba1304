package dev.inplace.activities.host;

import dev.inplace.workflows.api.HostActivities.StageProgress;
import io.temporal.activity.ActivityExecutionContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.function.LongSupplier;

/**
 * Staging progress, heartbeated as bytes go: at most once per interval while a file uploads, and at
 * once when an artifact is done, so a retry knows which artifacts it can skip.
 */
final class StageHeartbeat {
  private final ActivityExecutionContext context;
  private final long intervalNanos;
  private final LongSupplier clock;
  private final List<String> done = new ArrayList<>();
  private long bytesBefore;
  private long lastBeat;

  StageHeartbeat(ActivityExecutionContext context, Duration interval, LongSupplier clock) {
    this.context = context;
    this.intervalNanos = interval.toNanos();
    this.clock = clock;
    this.lastBeat = clock.getAsLong();
  }

  /** Progress of an earlier attempt of this activity, if it heartbeated any. */
  synchronized StageProgress resume() {
    Optional<StageProgress> previous = context.getHeartbeatDetails(StageProgress.class);
    previous.ifPresent(
        p -> {
          done.addAll(p.done());
          bytesBefore = p.bytesSent();
        });
    return current(0);
  }

  /** Bytes of the file being uploaded so far; heartbeats if the interval has passed. */
  void uploading(long fileBytes) {
    long now = clock.getAsLong();
    if (now - lastBeat >= intervalNanos) {
      beat(current(fileBytes));
    }
  }

  synchronized void finished(String artifact, long fileBytes) {
    done.add(artifact);
    bytesBefore += fileBytes;
    beat(current(0));
  }

  /** The progress so far, for beats from the step's side thread (never less than the last checkpoint). */
  synchronized StageProgress progress() {
    return current(0);
  }

  long bytesSent() {
    return bytesBefore;
  }

  private StageProgress current(long fileBytes) {
    return new StageProgress(List.copyOf(done), bytesBefore + fileBytes);
  }

  private void beat(StageProgress progress) {
    lastBeat = clock.getAsLong();
    context.heartbeat(progress);
  }
}
