package dev.inplace.worker.watch;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;

/**
 * How the custom resource watcher runs.
 *
 * @param namespace the namespace to watch; null watches every namespace
 * @param statusInterval how often each active CR's status is refreshed from its runs (at most)
 * @param abortGracePeriod after a CR is deleted and {@code abort} sent, how long its run may take
 *     to finish its nodes in flight before it is cancelled (the nodes in flight are then rolled back)
 * @param resyncPeriod how often the informers re-deliver every CR (a safety net for missed events)
 * @param leaderElection the Lease replicas compete for; null when this process is the only watcher
 */
public record WatcherOptions(
    String namespace,
    Duration statusInterval,
    Duration abortGracePeriod,
    Duration resyncPeriod,
    LeaderElection leaderElection) {

  public static final String WATCHER = "INPLACE_WATCHER";
  public static final String WATCH_NAMESPACE = "INPLACE_WATCH_NAMESPACE";
  public static final String STATUS_INTERVAL_SECONDS = "INPLACE_STATUS_INTERVAL_SECONDS";
  public static final String ABORT_GRACE_SECONDS = "INPLACE_ABORT_GRACE_SECONDS";
  public static final String LEADER_ELECTION = "INPLACE_LEADER_ELECTION";
  public static final String LEASE_NAMESPACE = "INPLACE_LEASE_NAMESPACE";
  public static final String LEASE_NAME = "INPLACE_LEASE_NAME";
  public static final String POD_NAMESPACE = "POD_NAMESPACE";
  public static final String POD_NAME = "POD_NAME";

  /** Every key {@link #fromEnvironment} reads; docs/crd-reference.md lists each (a test checks). */
  public static final List<String> KEYS =
      List.of(
          WATCHER,
          WATCH_NAMESPACE,
          STATUS_INTERVAL_SECONDS,
          ABORT_GRACE_SECONDS,
          LEADER_ELECTION,
          LEASE_NAMESPACE,
          LEASE_NAME,
          POD_NAMESPACE,
          POD_NAME);

  public static final String DEFAULT_LEASE_NAME = "inplace-watcher";

  /**
   * A coordination.k8s.io Lease: whoever holds it runs the watcher. A replica that loses it stops
   * acting at once and competes again.
   */
  public record LeaderElection(
      String leaseNamespace,
      String leaseName,
      String identity,
      Duration leaseDuration,
      Duration renewDeadline,
      Duration retryPeriod) {
    public LeaderElection {
      require(leaseNamespace, "lease namespace");
      require(leaseName, "lease name");
      require(identity, "identity");
      if (!(retryPeriod.compareTo(renewDeadline) < 0 && renewDeadline.compareTo(leaseDuration) < 0)) {
        throw new IllegalArgumentException("leader election needs retryPeriod < renewDeadline < leaseDuration");
      }
    }

    /** The usual timings: a 15 s lease renewed within 10 s, tried every 2 s. */
    public static LeaderElection of(String leaseNamespace, String leaseName, String identity) {
      return new LeaderElection(
          leaseNamespace, leaseName, identity, Duration.ofSeconds(15), Duration.ofSeconds(10), Duration.ofSeconds(2));
    }

    private static void require(String value, String what) {
      if (value == null || value.isBlank()) {
        throw new IllegalArgumentException(what + " is required for leader election");
      }
    }
  }

  public WatcherOptions {
    if (namespace != null && namespace.isBlank()) {
      namespace = null;
    }
    requirePositive(statusInterval, "statusInterval");
    requirePositive(abortGracePeriod, "abortGracePeriod");
    requirePositive(resyncPeriod, "resyncPeriod");
  }

  /** Every namespace, status every 2 s, 10 min for an aborted run to finish, no leader election. */
  public static WatcherOptions defaults() {
    return new WatcherOptions(null, Duration.ofSeconds(2), Duration.ofMinutes(10), Duration.ofMinutes(5), null);
  }

  public WatcherOptions inNamespace(String watched) {
    return new WatcherOptions(watched, statusInterval, abortGracePeriod, resyncPeriod, leaderElection);
  }

  public WatcherOptions withStatusInterval(Duration interval) {
    return new WatcherOptions(namespace, interval, abortGracePeriod, resyncPeriod, leaderElection);
  }

  public WatcherOptions withAbortGracePeriod(Duration grace) {
    return new WatcherOptions(namespace, statusInterval, grace, resyncPeriod, leaderElection);
  }

  public WatcherOptions withResyncPeriod(Duration resync) {
    return new WatcherOptions(namespace, statusInterval, abortGracePeriod, resync, leaderElection);
  }

  public WatcherOptions withLeaderElection(LeaderElection election) {
    return new WatcherOptions(namespace, statusInterval, abortGracePeriod, resyncPeriod, election);
  }

  /**
   * The worker's watcher settings from its environment; empty when {@code INPLACE_WATCHER=false}.
   * Leader election is on unless {@code INPLACE_LEADER_ELECTION=false}; the Lease lives in
   * {@code INPLACE_LEASE_NAMESPACE}, else the pod's namespace, else {@code default}.
   */
  public static Optional<WatcherOptions> fromEnvironment(Map<String, String> env) {
    List<String> problems = new ArrayList<>();
    boolean enabled = flag(env, WATCHER, true, problems);
    boolean elect = flag(env, LEADER_ELECTION, true, problems);
    WatcherOptions defaults = defaults();
    Duration interval = seconds(env, STATUS_INTERVAL_SECONDS, defaults.statusInterval(), problems);
    Duration grace = seconds(env, ABORT_GRACE_SECONDS, defaults.abortGracePeriod(), problems);
    if (!problems.isEmpty()) {
      throw new IllegalArgumentException("invalid watcher configuration: " + String.join("; ", problems));
    }
    if (!enabled) {
      return Optional.empty();
    }
    LeaderElection election = null;
    if (elect) {
      String leaseNamespace = value(env, LEASE_NAMESPACE).or(() -> value(env, POD_NAMESPACE)).orElse("default");
      String identity = value(env, POD_NAME).orElseGet(WatcherOptions::hostIdentity);
      election = LeaderElection.of(leaseNamespace, value(env, LEASE_NAME).orElse(DEFAULT_LEASE_NAME), identity);
    }
    return Optional.of(
        new WatcherOptions(
            value(env, WATCH_NAMESPACE).orElse(null), interval, grace, defaults.resyncPeriod(), election));
  }

  private static String hostIdentity() {
    String host;
    try {
      host = InetAddress.getLocalHost().getHostName();
    } catch (UnknownHostException e) {
      host = "inplace-worker";
    }
    // Two processes on one host must not share an identity.
    return host + "-" + UUID.randomUUID().toString().substring(0, 8);
  }

  private static Optional<String> value(Map<String, String> env, String key) {
    String v = env.get(key);
    return v == null || v.isBlank() ? Optional.empty() : Optional.of(v.trim());
  }

  private static boolean flag(Map<String, String> env, String key, boolean fallback, List<String> problems) {
    Optional<String> v = value(env, key);
    if (v.isEmpty()) {
      return fallback;
    }
    if (v.get().equalsIgnoreCase("true") || v.get().equalsIgnoreCase("false")) {
      return Boolean.parseBoolean(v.get());
    }
    problems.add(key + " must be true or false, got '" + v.get() + "'");
    return fallback;
  }

  private static Duration seconds(Map<String, String> env, String key, Duration fallback, List<String> problems) {
    Optional<String> v = value(env, key);
    if (v.isEmpty()) {
      return fallback;
    }
    try {
      long s = Long.parseLong(v.get());
      if (s >= 1) {
        return Duration.ofSeconds(s);
      }
    } catch (NumberFormatException e) {
      // reported below
    }
    problems.add(key + " must be a whole number of seconds >= 1, got '" + v.get() + "'");
    return fallback;
  }

  private static void requirePositive(Duration d, String what) {
    if (d == null || d.isZero() || d.isNegative()) {
      throw new IllegalArgumentException(what + " must be positive");
    }
  }
}
