package dev.inplace.sandbox.kube;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.io.Closeable;
import java.time.Duration;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Plays ReplicaSet controller and scheduler for pods owned by a ReplicaSet: when such a pod is
 * deleted, after {@code delay} a replacement (same labels, owner and spec, new name) is created on
 * a Ready, schedulable node, Running and Ready. The node is chosen deterministically: the one with
 * the fewest ReplicaSet pods, ties broken by name. With no such node the replacement stays Pending
 * and unscheduled until one appears (checked every {@code delay}).
 *
 * <p>It keeps the count as it was, so it needs no ReplicaSet object; create one with {@code
 * spec.replicas} if a PodDisruptionBudget should compute percentages or maxUnavailable from it.
 */
public final class ReplicaSetSimulator implements Closeable {
  public static final Duration DEFAULT_DELAY = Duration.ofMillis(300);
  private static final Logger log = LoggerFactory.getLogger(ReplicaSetSimulator.class);

  private final KubernetesClient client;
  private final Duration delay;
  private final ScheduledExecutorService executor;
  private final SharedIndexInformer<Pod> informer;
  private final AtomicInteger replacements = new AtomicInteger();
  private int nameCounter;

  /** Starts watching pods through {@code client}, replacing after {@link #DEFAULT_DELAY}. */
  public static ReplicaSetSimulator start(KubernetesClient client) {
    return start(client, DEFAULT_DELAY);
  }

  public static ReplicaSetSimulator start(KubernetesClient client, Duration delay) {
    return new ReplicaSetSimulator(client, delay);
  }

  private ReplicaSetSimulator(KubernetesClient client, Duration delay) {
    this.client = client;
    this.delay = delay;
    this.executor =
        Executors.newSingleThreadScheduledExecutor(
            r -> {
              Thread t = new Thread(r, "replicaset-simulator");
              t.setDaemon(true);
              return t;
            });
    this.informer = client.pods().inAnyNamespace().inform(new Handler());
    executor.scheduleWithFixedDelay(
        this::schedulePending, delay.toMillis(), delay.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** How many replacement pods this simulator has created. */
  public int replacements() {
    return replacements.get();
  }

  private final class Handler implements ResourceEventHandler<Pod> {
    @Override
    public void onAdd(Pod pod) {}

    @Override
    public void onUpdate(Pod oldPod, Pod newPod) {}

    @Override
    public void onDelete(Pod pod, boolean deletedFinalStateUnknown) {
      if (ownerReplicaSet(pod).isEmpty()) {
        return;
      }
      try {
        executor.schedule(() -> replace(pod), delay.toMillis(), TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        // closing
      }
    }
  }

  private void replace(Pod deleted) {
    String namespace = deleted.getMetadata().getNamespace();
    OwnerReference owner = ownerReplicaSet(deleted).orElseThrow();
    Pod replacement =
        new PodBuilder()
            .withNewMetadata()
            .withNamespace(namespace)
            .withName(newName(namespace, owner.getName()))
            .withLabels(deleted.getMetadata().getLabels())
            .withOwnerReferences(deleted.getMetadata().getOwnerReferences())
            .endMetadata()
            .withSpec(deleted.getSpec())
            .editSpec()
            .withNodeName(null)
            .endSpec()
            .withNewStatus()
            .withPhase("Pending")
            .endStatus()
            .build();
    Optional<String> node = chooseNode();
    node.ifPresent(n -> bind(replacement, n));
    try {
      client.pods().inNamespace(namespace).resource(replacement).create();
      replacements.incrementAndGet();
      log.debug(
          "Replaced pod {}/{} with {} on {}",
          namespace,
          deleted.getMetadata().getName(),
          replacement.getMetadata().getName(),
          node.orElse("no node (Pending)"));
    } catch (KubernetesClientException e) {
      log.warn("Could not create a replacement for pod {}/{}", namespace, deleted.getMetadata().getName(), e);
    }
  }

  /** Binds Pending, unscheduled ReplicaSet pods once a node can take them. */
  private void schedulePending() {
    try {
      List<Pod> pending =
          client.pods().inAnyNamespace().list().getItems().stream()
              .filter(p -> ownerReplicaSet(p).isPresent())
              .filter(p -> p.getSpec() == null || p.getSpec().getNodeName() == null)
              .filter(p -> p.getMetadata().getDeletionTimestamp() == null)
              .sorted(Comparator.comparing((Pod p) -> p.getMetadata().getName()))
              .toList();
      for (Pod pod : pending) {
        Optional<String> node = chooseNode();
        if (node.isEmpty()) {
          return;
        }
        client
            .pods()
            .inNamespace(pod.getMetadata().getNamespace())
            .withName(pod.getMetadata().getName())
            .edit(
                p -> {
                  bind(p, node.get());
                  return p;
                });
        log.debug("Scheduled pending pod {} on {}", pod.getMetadata().getName(), node.get());
      }
    } catch (RuntimeException e) {
      log.debug("Scheduling pending pods failed; next round tries again", e);
    }
  }

  private static void bind(Pod pod, String nodeName) {
    pod.getSpec().setNodeName(nodeName);
    pod.setStatus(
        new PodBuilder()
            .withNewStatus()
            .withPhase("Running")
            .addNewCondition()
            .withType("PodScheduled")
            .withStatus("True")
            .endCondition()
            .addNewCondition()
            .withType("Ready")
            .withStatus("True")
            .endCondition()
            .endStatus()
            .build()
            .getStatus());
  }

  /** The Ready, schedulable node with the fewest ReplicaSet pods; ties by name. */
  private Optional<String> chooseNode() {
    Map<String, Integer> load = new HashMap<>();
    for (Pod pod : client.pods().inAnyNamespace().list().getItems()) {
      if (ownerReplicaSet(pod).isPresent()
          && pod.getSpec() != null
          && pod.getSpec().getNodeName() != null
          && pod.getMetadata().getDeletionTimestamp() == null) {
        load.merge(pod.getSpec().getNodeName(), 1, Integer::sum);
      }
    }
    return client.nodes().list().getItems().stream()
        .filter(ReplicaSetSimulator::schedulable)
        .map(n -> n.getMetadata().getName())
        .min(Comparator.comparing((String n) -> load.getOrDefault(n, 0)).thenComparing(n -> n));
  }

  private static boolean schedulable(Node node) {
    boolean cordoned =
        node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable());
    boolean ready =
        node.getStatus() != null
            && node.getStatus().getConditions() != null
            && node.getStatus().getConditions().stream()
                .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
    return ready && !cordoned;
  }

  /** Runs on the single executor thread only. */
  private String newName(String namespace, String replicaSet) {
    while (true) {
      String name = replicaSet + "-" + suffix(++nameCounter);
      if (client.pods().inNamespace(namespace).withName(name).get() == null) {
        return name;
      }
    }
  }

  /** Five characters like the real ones, {@code r0001}, {@code r0002}, ... (deterministic). */
  private static String suffix(int n) {
    String base36 = Integer.toString(n, 36);
    return "r" + "0000".substring(Math.min(4, base36.length())) + base36;
  }

  static Optional<OwnerReference> ownerReplicaSet(Pod pod) {
    List<OwnerReference> owners = pod.getMetadata().getOwnerReferences();
    if (owners == null) {
      return Optional.empty();
    }
    return owners.stream()
        .filter(o -> Boolean.TRUE.equals(o.getController()) && "ReplicaSet".equals(o.getKind()))
        .findFirst();
  }

  @Override
  public void close() {
    informer.close();
    executor.shutdownNow();
    try {
      if (!executor.awaitTermination(5, TimeUnit.SECONDS)) {
        log.warn("ReplicaSet simulator did not stop within 5 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
