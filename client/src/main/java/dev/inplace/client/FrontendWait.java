package dev.inplace.client;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.temporal.api.workflowservice.v1.GetSystemInfoRequest;
import io.temporal.serviceclient.WorkflowServiceStubs;
import java.time.Duration;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Waits until the Temporal frontend answers. A worker started while the server is down or restarting
 * (a server crash, a rollout of the server, a pod that starts first) waits for it, its readiness probe
 * saying {@code connecting}, rather than failing its start-up calls (search-attribute registration,
 * the SDK's namespace checks) and exiting. Only the answers of an absent server wait: {@code
 * UNAVAILABLE} and {@code DEADLINE_EXCEEDED}. Any other answer (a refused API key, an unknown
 * namespace) ends the wait at once, and the start-up call that follows reports it exactly.
 */
public final class FrontendWait {
  private static final Logger log = LoggerFactory.getLogger(FrontendWait.class);
  private static final Set<Status.Code> ABSENT = Set.of(Status.Code.UNAVAILABLE, Status.Code.DEADLINE_EXCEEDED);
  private static final Duration FIRST_PAUSE = Duration.ofMillis(250);
  private static final Duration LONGEST_PAUSE = Duration.ofSeconds(5);
  private static final Duration CALL_DEADLINE = Duration.ofSeconds(5);

  private FrontendWait() {}

  /** Whether {@code e} says the frontend is not there (yet): the answers this class waits through. */
  public static boolean absent(Throwable e) {
    for (Throwable t = e; t != null; t = t.getCause()) {
      if (t instanceof StatusRuntimeException s) {
        return ABSENT.contains(s.getStatus().getCode());
      }
    }
    return false;
  }

  /**
   * Returns once {@code service}'s frontend answers GetSystemInfo (or answers anything but absence);
   * how many calls found it absent. Pauses between calls grow from 0.25 s to 5 s; one warning per
   * minute while it waits.
   *
   * @throws InterruptedException when the thread is interrupted (the process is stopping)
   */
  public static int await(WorkflowServiceStubs service, String address) throws InterruptedException {
    int absentCalls = 0;
    long pause = FIRST_PAUSE.toMillis();
    long lastWarning = 0;
    while (true) {
      try {
        service.blockingStub().withDeadlineAfter(CALL_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
            .getSystemInfo(GetSystemInfoRequest.getDefaultInstance());
        if (absentCalls > 0) {
          log.info("the Temporal frontend at {} answers, after {} call(s) that found it absent", address, absentCalls);
        }
        return absentCalls;
      } catch (StatusRuntimeException e) {
        if (!absent(e)) {
          return absentCalls;
        }
        absentCalls++;
        long now = System.nanoTime();
        if (lastWarning == 0 || now - lastWarning >= TimeUnit.MINUTES.toNanos(1)) {
          lastWarning = now;
          log.warn("waiting for the Temporal frontend at {}: {}; the worker starts once it answers",
              address, e.getStatus().getCode());
        }
      }
      Thread.sleep(pause);
      pause = Math.min(LONGEST_PAUSE.toMillis(), pause * 2);
    }
  }
}
