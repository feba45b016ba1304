package dev.inplace.activities.kube;

import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.NodeActivities.DrainProgress;
import dev.inplace.workflows.api.NodeActivities.DrainResult;
import dev.inplace.workflows.api.NodeActivities.PendingPod;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.Watcher;
import io.temporal.activity.ActivityExecutionContext;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One drain of one node: evicts through the Eviction API until no evictable pod is left or the
 * timeout passes, looking again after a backoff or as soon as a watched pod or budget changes
 * ({@link ChangeSignal}), and heartbeating the pods still to go with what blocks them.
 *
 * <p>Counts in the result: {@code evicted} are pods the Eviction API accepted (carried over from
 * earlier attempts through the heartbeat); {@code deleted} are finished pods removed directly plus,
 * with {@link PdbBlockedAction#DELETE}, pods deleted at the timeout despite their budget.
 */
final class NodeDrain {
  private static final Logger log = LoggerFactory.getLogger(NodeDrain.class);

  private final KubernetesClient client;
  private final String what;
  private final String nodeName;
  private final DrainOptions options;
  private final ActivityExecutionContext context;
  private final PollBackoff backoff;
  /** Wakes the wait between two rounds when a pod it waits on changes; set while {@link #run} runs. */
  private ChangeSignal changes;

  private final Set<String> skippedDaemonSet = new TreeSet<>();
  private final Set<String> skippedMirror = new TreeSet<>();
  private int evicted;
  private int deleted;
  /** The progress last heartbeated, for the side thread's beats (null before the first round). */
  private volatile DrainProgress latest;

  /** Why an eviction did not happen: a budget's name, or another refusal described. */
  private record Blocker(String name, boolean budget) {
    String describe() {
      return budget ? "PodDisruptionBudget " + name : name;
    }
  }

  NodeDrain(
      KubernetesClient client,
      String what,
      String nodeName,
      DrainOptions options,
      ActivityExecutionContext context,
      Duration firstPoll,
      Duration pollInterval) {
    this.client = client;
    this.what = what;
    this.nodeName = nodeName;
    this.options = options;
    this.context = context;
    this.backoff = new PollBackoff(firstPoll, pollInterval);
  }

  DrainResult run() {
    try (ChangeSignal signal = new ChangeSignal()) {
      changes = signal;
      // A pod leaving the node (an eviction's pod terminated) ends the wait at once.
      changes.<Pod>watch("pods on " + what,
          w -> client.pods().inAnyNamespace().withField("spec.nodeName", nodeName).watch(w),
          (action, pod) -> action == Watcher.Action.DELETED);
      return drain();
    } finally {
      changes = null;
    }
  }

  private DrainResult drain() {
    long start = System.nanoTime();
    long deadline = start + Duration.ofSeconds(options.timeoutSeconds()).toNanos();
    evicted = context.getHeartbeatDetails(DrainProgress.class).map(DrainProgress::evicted).orElse(0);
    Map<String, Blocker> blockedBy = Map.of();
    DrainProgress progress = new DrainProgress(List.of(), evicted);
    latest = progress;
    while (true) {
      boolean pastDeadline = System.nanoTime() - deadline >= 0;
      DrainPlan plan;
      try {
        plan = DrainPlan.of(podsOnNode(), options);
      } catch (KubernetesClientException e) {
        if (!KubeFailures.isTransient(e) || pastDeadline) {
          throw KubeFailures.translate(e, UpgradeFailures.NODE_NOT_FOUND, what);
        }
        log.warn("Listing pods of {} failed, will retry: {}", what, KubeFailures.describe(e));
        context.heartbeat(progress); // still alive while the API server is away
        sleep();
        continue;
      }
      plan.daemonSet().forEach(p -> skippedDaemonSet.add(DrainPlan.key(p)));
      plan.mirror().forEach(p -> skippedMirror.add(DrainPlan.key(p)));
      if (!plan.refused().isEmpty()) {
        throw UpgradeFailures.nonRetryable(
            UpgradeFailures.DRAIN_BLOCKED,
            "Drain of " + what + " refused: " + String.join(", ", plan.refused()));
      }
      deleteFinished(plan.finished());
      if (plan.drained()) {
        return result(start);
      }
      if (pastDeadline) {
        return onTimeout(plan, blockedBy, start);
      }
      blockedBy = evict(plan.evictable());
      progress = new DrainProgress(pending(plan, blockedBy), evicted);
      latest = progress;
      context.heartbeat(progress);
      sleep();
    }
  }

  /** The progress last heartbeated (null before {@link #run} started). */
  DrainProgress latest() {
    return latest;
  }

  private List<Pod> podsOnNode() {
    return client.pods().inAnyNamespace().withField("spec.nodeName", nodeName).list().getItems();
  }

  private void deleteFinished(List<Pod> finished) {
    for (Pod pod : finished) {
      try {
        delete(pod);
        deleted++;
      } catch (KubernetesClientException e) {
        if (!KubeFailures.isTransient(e)) {
          throw KubeFailures.translate(e, UpgradeFailures.KUBERNETES_API_ERROR, "pod " + key(pod));
        }
        // Next round tries again.
      }
    }
  }

  /** Evicts each pod; returns what blocks the pods the API refused, keyed by namespace/name. */
  private Map<String, Blocker> evict(List<Pod> pods) {
    Map<String, Blocker> blocked = new HashMap<>();
    Map<String, List<PodDisruptionBudget>> budgets = new HashMap<>();
    for (Pod pod : pods) {
      String key = DrainPlan.key(pod);
      try {
        if (client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .evict()) {
          evicted++;
          log.debug("Evicted pod {} from {}", key, what);
        } else {
          blocked.put(key, blockingBudgets(pod, budgets));
        }
      } catch (KubernetesClientException e) {
        if (e.getCode() == 404) {
          continue; // gone meanwhile
        }
        if (!KubeFailures.isTransient(e)) {
          throw KubeFailures.translate(e, UpgradeFailures.KUBERNETES_API_ERROR, "pod " + key);
        }
        blocked.put(key, new Blocker("eviction failed: " + KubeFailures.describe(e), false));
      }
    }
    return blocked;
  }

  /** Names of the PodDisruptionBudgets selecting the pod (the API's 429 does not say which). */
  private Blocker blockingBudgets(Pod pod, Map<String, List<PodDisruptionBudget>> cache) {
    String namespace = pod.getMetadata().getNamespace();
    List<PodDisruptionBudget> inNamespace;
    try {
      inNamespace =
          cache.computeIfAbsent(
              namespace,
              ns ->
                  client.policy().v1().podDisruptionBudget().inNamespace(ns).list().getItems());
    } catch (KubernetesClientException e) {
      return new Blocker(
          "a PodDisruptionBudget (listing budgets failed: " + KubeFailures.describe(e) + ")", false);
    }
    List<PodDisruptionBudget> matching =
        inNamespace.stream()
            .filter(
                pdb ->
                    LabelSelectors.matches(
                        pdb.getSpec() == null ? null : pdb.getSpec().getSelector(),
                        pod.getMetadata().getLabels()))
            .toList();
    matching.forEach(pdb -> wakeOnBudget(namespace, pdb));
    String names =
        matching.stream()
            .map(pdb -> pdb.getMetadata().getName())
            .sorted()
            .collect(Collectors.joining(","));
    return names.isEmpty()
        ? new Blocker("eviction refused (TooManyRequests)", false)
        : new Blocker(names, true);
  }

  /**
   * The budget allows the eviction again once a pod it selects turns healthy (the replacement of one
   * evicted elsewhere) and, on a real cluster, once the disruption controller updates its status:
   * either ends the wait, so the eviction is tried again at once instead of at the next backoff.
   */
  private void wakeOnBudget(String namespace, PodDisruptionBudget pdb) {
    String name = pdb.getMetadata().getName();
    changes.<Pod>watch("pods of PodDisruptionBudget " + namespace + "/" + name,
        w -> client.pods().inNamespace(namespace).withLabelSelector(pdb.getSpec().getSelector()).watch(w),
        (action, pod) -> action != Watcher.Action.DELETED && healthy(pod));
    changes.<PodDisruptionBudget>watch("PodDisruptionBudget " + namespace + "/" + name,
        w -> client.policy().v1().podDisruptionBudget().inNamespace(namespace).withName(name).watch(w),
        (action, budget) -> budget.getStatus() != null && budget.getStatus().getDisruptionsAllowed() != null
            && budget.getStatus().getDisruptionsAllowed() > 0);
  }

  /** Running, Ready and not terminating: a pod that counts toward its budget's healthy pods. */
  private static boolean healthy(Pod pod) {
    return pod.getMetadata() != null && pod.getMetadata().getDeletionTimestamp() == null
        && pod.getStatus() != null && "Running".equals(pod.getStatus().getPhase())
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private static List<PendingPod> pending(DrainPlan plan, Map<String, Blocker> blockedBy) {
    List<PendingPod> pending = new ArrayList<>();
    for (Pod pod : plan.evictable()) {
      Blocker blocker = blockedBy.get(DrainPlan.key(pod));
      pending.add(pendingPod(pod, blocker == null ? null : blocker.name()));
    }
    for (Pod pod : plan.terminating()) {
      pending.add(pendingPod(pod, null));
    }
    return pending;
  }

  private static PendingPod pendingPod(Pod pod, String blockedBy) {
    return new PendingPod(pod.getMetadata().getNamespace(), pod.getMetadata().getName(), blockedBy);
  }

  private DrainResult onTimeout(DrainPlan plan, Map<String, Blocker> blockedBy, long start) {
    if (options.onBlocked() == PdbBlockedAction.DELETE) {
      for (Pod pod : plan.evictable()) {
        try {
          delete(pod);
          deleted++;
          log.warn(
              "Deleted pod {} from {} after {}s despite {}",
              DrainPlan.key(pod),
              what,
              options.timeoutSeconds(),
              describe(blockedBy.get(key(pod))));
        } catch (KubernetesClientException e) {
          throw KubeFailures.translate(e, UpgradeFailures.KUBERNETES_API_ERROR, "pod " + key(pod));
        }
      }
      return result(start);
    }
    List<PendingPod> pending = pending(plan, blockedBy);
    List<String> pods = new ArrayList<>();
    for (Pod pod : plan.evictable()) {
      pods.add(key(pod) + " (" + describe(blockedBy.get(key(pod))) + ")");
    }
    plan.terminating().forEach(pod -> pods.add(key(pod) + " (terminating)"));
    throw UpgradeFailures.nonRetryable(
        UpgradeFailures.DRAIN_BLOCKED,
        "Drain of " + what + " did not finish within " + options.timeoutSeconds() + "s; "
            + pods.size() + " pod(s) left: " + String.join(", ", pods),
        new DrainProgress(pending, evicted));
  }

  private void delete(Pod pod) {
    client
        .pods()
        .inNamespace(pod.getMetadata().getNamespace())
        .withName(pod.getMetadata().getName())
        .delete();
  }

  private DrainResult result(long start) {
    long waited = Duration.ofNanos(System.nanoTime() - start).toSeconds();
    return new DrainResult(evicted, deleted, skippedDaemonSet.size(), skippedMirror.size(), waited);
  }

  /**
   * Waits the backoff, or less when something the drain waits on changes, but never less than
   * {@link PollBackoff#FIRST}: a node whose many pods terminate at once sends a burst of events, and
   * one look after the burst sees them all.
   */
  private void sleep() {
    try {
      long started = System.nanoTime();
      if (changes.await(backoff.nextMillis())) {
        long floor = PollBackoff.FIRST.toMillis() - (System.nanoTime() - started) / 1_000_000L;
        if (floor > 0) {
          Thread.sleep(floor);
        }
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("drain of " + what + " interrupted", e);
    }
  }

  private static String describe(Blocker blocker) {
    return blocker == null ? "not evicted yet" : blocker.describe();
  }

  private static String key(Pod pod) {
    return DrainPlan.key(pod);
  }
}
