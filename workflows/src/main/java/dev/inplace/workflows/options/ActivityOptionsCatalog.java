package dev.inplace.workflows.options;

import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.activity.ActivityCancellationType;
import io.temporal.activity.ActivityOptions;
import io.temporal.activity.LocalActivityOptions;
import io.temporal.common.RetryOptions;
import java.time.Duration;

/**
 * Every activity's timeouts and retry policy, in one place. Long activities (staging, drain, waiting
 * for Ready) heartbeat, so a dead worker is noticed within their heartbeat timeout and the activity
 * resumes from its last heartbeat on another attempt.
 *
 * <p>Every activity waits for its own cancellation to complete: a compensation must never run while
 * the step it undoes is still touching the host.
 */
public final class ActivityOptionsCatalog {
  /** Slack on top of a request's own timeout so the activity can report its own failure first. */
  private static final Duration SLACK = Duration.ofSeconds(60);

  /**
   * ControlPlaneUpgrade's health gate before each node: long enough for a restarted server to be
   * Ready again and rejoin etcd.
   */
  public static final long CONTROL_PLANE_GATE_SECONDS = 300;

  /**
   * WorkersUpgrade's start gate: the control plane should already run the target, so a short wait
   * only rides out a blip.
   */
  public static final long WORKERS_GATE_SECONDS = 60;

  private ActivityOptionsCatalog() {}

  private static RetryOptions retries(int maxAttempts, Duration initial) {
    return RetryOptions.newBuilder()
        .setInitialInterval(initial)
        .setBackoffCoefficient(2.0)
        .setMaximumInterval(Duration.ofSeconds(30))
        .setMaximumAttempts(maxAttempts)
        .setDoNotRetry(UpgradeFailures.NON_RETRYABLE.toArray(String[]::new))
        .build();
  }

  /**
   * Attempts of every step that runs scripts on a host over SSH (host steps, staging, the etcd
   * snapshot, the distribution's upgrade command). Any attempt can be lost without anything being
   * wrong with the step: its worker dies (the heartbeat timeout ends the attempt) or its connection
   * drops or hangs (HostUnreachable, StepTimedOut); the steps are idempotent and resume, so the
   * policy leaves room for two dead workers and a run of lost connections. Staging is the most
   * exposed: each attempt opens a connection for its checks and each upload, so at the chaos
   * campaign's 10% drops about a third of its attempts lose one. Six attempts ran out on one node of
   * a 30-node campaign (seed 11: two killed, four dropped; docs/reliability.md, finding 9); ten
   * make that about 2 in 10,000 per node. The backoff (capped at 30 s) gives a host that is really
   * gone about three minutes before the step fails.
   */
  public static final int HOST_SCRIPT_ATTEMPTS = 10;

  /**
   * How long a host step may go without a heartbeat: the steps beat every 2 s while their scripts
   * run, so a worker that dies mid-step is noticed within this and the step is retried (it resumes
   * idempotently), instead of after the whole start-to-close timeout (found by the chaos campaign,
   * docs/reliability.md).
   */
  public static final Duration HOST_STEP_HEARTBEAT_TIMEOUT = Duration.ofSeconds(15);

  /** Short SSH steps: inspect, backup, install, restore, restart; they heartbeat while they run. */
  public static ActivityOptions hostStep() {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofMinutes(3))
        .setHeartbeatTimeout(HOST_STEP_HEARTBEAT_TIMEOUT)
        .setRetryOptions(retries(HOST_SCRIPT_ATTEMPTS, Duration.ofSeconds(2)))
        .build();
  }

  /** Marking a Machine around its upgrade: a local activity (one small patch, retried briefly). */
  public static LocalActivityOptions machineMark() {
    return LocalActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofSeconds(30))
        .setScheduleToCloseTimeout(Duration.ofMinutes(3))
        .setRetryOptions(retries(8, Duration.ofSeconds(1)))
        .build();
  }

  /** Uploading artifacts: long, heartbeating, resumable (already-staged files are skipped). */
  public static ActivityOptions staging() {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofMinutes(30))
        .setHeartbeatTimeout(Duration.ofSeconds(20))
        .setRetryOptions(retries(HOST_SCRIPT_ATTEMPTS, Duration.ofSeconds(5)))
        .build();
  }

  /**
   * Short Kubernetes calls: inspect, cordon, uncordon, CAPI patches. The worker heartbeats them
   * while they run (its ShortCallHeartbeatInterceptor), so a dead worker's call is retried within
   * the heartbeat timeout rather than after the minute.
   */
  public static ActivityOptions kubeCall() {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofSeconds(60))
        .setHeartbeatTimeout(HOST_STEP_HEARTBEAT_TIMEOUT)
        .setRetryOptions(retries(8, Duration.ofSeconds(1)))
        .build();
  }

  /**
   * The Plan workflow's reads (inventory, Nodes, budgets, the host inspect script, rendering): short,
   * retried briefly, since an operator waits on the answer and a failed read becomes a finding.
   */
  public static ActivityOptions planRead() {
    return ActivityOptions.newBuilder()
        .setStartToCloseTimeout(Duration.ofSeconds(60))
        .setRetryOptions(retries(3, Duration.ofSeconds(1)))
        .build();
  }

  /** A drain bounded by its own timeout; heartbeats the pods still to go. */
  public static ActivityOptions drain(long drainTimeoutSeconds) {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofSeconds(drainTimeoutSeconds).plus(SLACK))
        .setHeartbeatTimeout(Duration.ofSeconds(10))
        .setRetryOptions(retries(3, Duration.ofSeconds(2)))
        .build();
  }

  /**
   * Fetching and verifying artifacts into the worker's cache: large downloads; heartbeats while it
   * runs, so a dead worker's fetch is retried within the heartbeat timeout, not after 30 minutes
   * (the cache keeps what was verified).
   */
  public static ActivityOptions artifactFetch() {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofMinutes(30))
        .setHeartbeatTimeout(HOST_STEP_HEARTBEAT_TIMEOUT)
        .setRetryOptions(retries(5, Duration.ofSeconds(5)))
        .build();
  }

  /**
   * An etcd snapshot on the first control-plane host: can take minutes on a large datastore; beats
   * while it runs, as the host steps do (a retry finds a snapshot already taken by name).
   */
  public static ActivityOptions etcdSnapshot() {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofMinutes(15))
        .setHeartbeatTimeout(HOST_STEP_HEARTBEAT_TIMEOUT)
        .setRetryOptions(retries(HOST_SCRIPT_ATTEMPTS, Duration.ofSeconds(5)))
        .build();
  }

  /**
   * The distribution's upgrade command ({@code kubeadm upgrade apply|node}): kubeadm waits up to
   * five minutes for each static pod, so a control plane can take a quarter of an hour. It is
   * idempotent, so a lost connection is retried; it beats while it runs, as the host steps do.
   */
  public static ActivityOptions distributionUpgrade() {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofMinutes(25))
        .setHeartbeatTimeout(HOST_STEP_HEARTBEAT_TIMEOUT)
        .setRetryOptions(retries(HOST_SCRIPT_ATTEMPTS, Duration.ofSeconds(10)))
        .build();
  }

  /** Waiting for a node to report Ready at a version, bounded by the request's timeout. */
  public static ActivityOptions awaitNode(long timeoutSeconds) {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofSeconds(timeoutSeconds).plus(SLACK))
        .setHeartbeatTimeout(Duration.ofSeconds(10))
        .setRetryOptions(retries(3, Duration.ofSeconds(2)))
        .build();
  }

  /** Waiting for the control plane to be healthy, bounded by the request's timeout; heartbeats. */
  public static ActivityOptions controlPlaneHealth(long timeoutSeconds) {
    return ActivityOptions.newBuilder()
        .setCancellationType(ActivityCancellationType.WAIT_CANCELLATION_COMPLETED)
        .setStartToCloseTimeout(Duration.ofSeconds(timeoutSeconds).plus(SLACK))
        .setHeartbeatTimeout(Duration.ofSeconds(20))
        .setRetryOptions(retries(3, Duration.ofSeconds(2)))
        .build();
  }
}
