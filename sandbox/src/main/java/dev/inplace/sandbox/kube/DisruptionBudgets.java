package dev.inplace.sandbox.kube;

import dev.inplace.activities.kube.LabelSelectors;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.api.model.apps.ReplicaSet;
import io.fabric8.kubernetes.api.model.apps.StatefulSet;
import io.fabric8.kubernetes.api.model.policy.v1.PodDisruptionBudget;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Decides an eviction the way kube-apiserver's eviction REST handler does, with the disruption
 * controller's arithmetic done on the spot instead of read from {@code PodDisruptionBudget.status}:
 *
 * <ul>
 *   <li>pods that are terminating, Pending, Succeeded or Failed ignore budgets;
 *   <li>no matching budget: allowed; more than one: refused with 500, as a real server does;
 *   <li>one budget: {@code desiredHealthy} from {@code minAvailable} (int, or percent of the
 *       expected count rounded up) or {@code expected - maxUnavailable} (percent rounded up);
 *       {@code currentHealthy} counts matching pods that are Running, Ready and not terminating;
 *       a healthy pod may go when {@code currentHealthy - desiredHealthy >= 1}, an unhealthy one
 *       when {@code currentHealthy >= desiredHealthy} or the budget's {@code
 *       unhealthyPodEvictionPolicy} is {@code AlwaysAllow}.
 * </ul>
 *
 * The expected count is the sum of the owning controllers' {@code spec.replicas} (ReplicaSet,
 * StatefulSet) when those objects exist, otherwise the number of matching pods per owner.
 */
final class DisruptionBudgets {
  static final String REFUSAL_MESSAGE =
      "Cannot evict pod as it would violate the pod's disruption budget.";

  private final SandboxDispatcher.Store store;

  DisruptionBudgets(SandboxDispatcher.Store store) {
    this.store = store;
  }

  record Verdict(boolean allowed, Status refusal) {
    static Verdict allow() {
      return new Verdict(true, null);
    }
  }

  Verdict evaluate(Pod pod) {
    if (ignoresBudgets(pod)) {
      return Verdict.allow();
    }
    String namespace = pod.getMetadata().getNamespace();
    List<PodDisruptionBudget> matching =
        store
            .list(
                "/apis/policy/v1/namespaces/" + namespace + "/poddisruptionbudgets",
                PodDisruptionBudget.class)
            .stream()
            .filter(
                pdb ->
                    pdb.getSpec() != null
                        && LabelSelectors.matches(
                            pdb.getSpec().getSelector(), pod.getMetadata().getLabels()))
            .toList();
    if (matching.isEmpty()) {
      return Verdict.allow();
    }
    if (matching.size() > 1) {
      return new Verdict(
          false,
          new StatusBuilder()
              .withStatus("Failure")
              .withReason("InternalError")
              .withMessage(
                  "This pod has more than one PodDisruptionBudget, which the eviction subresource"
                      + " does not support.")
              .withCode(500)
              .build());
    }
    PodDisruptionBudget pdb = matching.get(0);
    List<Pod> selected =
        store.list("/api/v1/namespaces/" + namespace + "/pods", Pod.class).stream()
            .filter(p -> LabelSelectors.matches(pdb.getSpec().getSelector(), p.getMetadata().getLabels()))
            .toList();
    int currentHealthy = (int) selected.stream().filter(DisruptionBudgets::healthy).count();
    int desiredHealthy = desiredHealthy(pdb, selected);
    boolean allowed =
        healthy(pod)
            ? currentHealthy - desiredHealthy >= 1
            : currentHealthy >= desiredHealthy
                || "AlwaysAllow".equals(pdb.getSpec().getUnhealthyPodEvictionPolicy());
    if (allowed) {
      return Verdict.allow();
    }
    return new Verdict(
        false,
        new StatusBuilder()
            .withStatus("Failure")
            .withReason("TooManyRequests")
            .withMessage(REFUSAL_MESSAGE)
            .withNewDetails()
            .addNewCause()
            .withReason("DisruptionBudget")
            .withMessage(
                "The disruption budget "
                    + pdb.getMetadata().getName()
                    + " needs "
                    + desiredHealthy
                    + " healthy pods and has "
                    + currentHealthy
                    + " currently")
            .endCause()
            .endDetails()
            .withCode(429)
            .build());
  }

  private int desiredHealthy(PodDisruptionBudget pdb, List<Pod> selected) {
    IntOrString minAvailable = pdb.getSpec().getMinAvailable();
    IntOrString maxUnavailable = pdb.getSpec().getMaxUnavailable();
    if (maxUnavailable != null) {
      int expected = expectedCount(selected);
      return Math.max(0, expected - scaled(maxUnavailable, expected));
    }
    if (minAvailable != null) {
      if (minAvailable.getIntVal() != null) {
        return minAvailable.getIntVal();
      }
      return scaled(minAvailable, expectedCount(selected));
    }
    return 0;
  }

  /** An int, or a percent of {@code total} rounded up (as intstr.GetScaledValueFromIntOrPercent). */
  static int scaled(IntOrString value, int total) {
    if (value.getIntVal() != null) {
      return value.getIntVal();
    }
    String text = value.getStrVal().trim();
    if (!text.endsWith("%")) {
      return Integer.parseInt(text);
    }
    int percent = Integer.parseInt(text.substring(0, text.length() - 1));
    return (int) Math.ceil(percent * total / 100.0);
  }

  private int expectedCount(List<Pod> selected) {
    Map<String, List<Pod>> byOwner = new LinkedHashMap<>();
    for (Pod pod : selected) {
      OwnerReference owner = controller(pod);
      String key =
          owner == null ? "Pod/" + pod.getMetadata().getName() : owner.getKind() + "/" + owner.getName();
      byOwner.computeIfAbsent(key, k -> new ArrayList<>()).add(pod);
    }
    int expected = 0;
    for (List<Pod> pods : byOwner.values()) {
      OwnerReference owner = controller(pods.get(0));
      Integer replicas =
          owner == null ? null : replicasOf(pods.get(0).getMetadata().getNamespace(), owner);
      expected += replicas != null ? replicas : pods.size();
    }
    return expected;
  }

  private Integer replicasOf(String namespace, OwnerReference owner) {
    String base = "/apis/apps/v1/namespaces/" + namespace;
    return switch (owner.getKind()) {
      case "ReplicaSet" -> {
        ReplicaSet rs = store.get(base + "/replicasets/" + owner.getName(), ReplicaSet.class);
        yield rs == null || rs.getSpec() == null ? null : rs.getSpec().getReplicas();
      }
      case "StatefulSet" -> {
        StatefulSet sts = store.get(base + "/statefulsets/" + owner.getName(), StatefulSet.class);
        yield sts == null || sts.getSpec() == null ? null : sts.getSpec().getReplicas();
      }
      default -> null;
    };
  }

  static OwnerReference controller(Pod pod) {
    List<OwnerReference> owners = pod.getMetadata().getOwnerReferences();
    return owners == null
        ? null
        : owners.stream().filter(o -> Boolean.TRUE.equals(o.getController())).findFirst().orElse(null);
  }

  /** Running, Ready and not terminating. */
  static boolean healthy(Pod pod) {
    return pod.getMetadata().getDeletionTimestamp() == null
        && pod.getStatus() != null
        && "Running".equals(pod.getStatus().getPhase())
        && pod.getStatus().getConditions() != null
        && pod.getStatus().getConditions().stream()
            .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus()));
  }

  private static boolean ignoresBudgets(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return pod.getMetadata().getDeletionTimestamp() != null
        || "Pending".equals(phase)
        || "Succeeded".equals(phase)
        || "Failed".equals(phase);
  }
}
