package dev.inplace.activities.kube;

import dev.inplace.workflows.api.DrainOptions;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;

/**
 * What a drain does with each pod on a node, decided the way {@code kubectl drain} decides it:
 * DaemonSet and mirror pods stay, finished pods are deleted, pods already terminating are waited
 * for, the rest are evicted, except pods whose eviction needs an explicit permission (emptyDir data,
 * no controller), which are refused.
 */
record DrainPlan(
    List<Pod> daemonSet,
    List<Pod> mirror,
    List<Pod> finished,
    List<Pod> terminating,
    List<Pod> evictable,
    List<String> refused) {

  static final String MIRROR_ANNOTATION = "kubernetes.io/config.mirror";

  private static final Comparator<Pod> BY_NAME =
      Comparator.comparing((Pod p) -> p.getMetadata().getNamespace())
          .thenComparing(p -> p.getMetadata().getName());

  static DrainPlan of(List<Pod> pods, DrainOptions options) {
    List<Pod> daemonSet = new ArrayList<>();
    List<Pod> mirror = new ArrayList<>();
    List<Pod> finished = new ArrayList<>();
    List<Pod> terminating = new ArrayList<>();
    List<Pod> evictable = new ArrayList<>();
    List<String> refused = new ArrayList<>();
    for (Pod pod : pods.stream().sorted(BY_NAME).toList()) {
      if (isMirror(pod)) {
        mirror.add(pod);
      } else if (isDaemonSetPod(pod)) {
        daemonSet.add(pod);
      } else if (pod.getMetadata().getDeletionTimestamp() != null) {
        terminating.add(pod);
      } else if (isFinished(pod)) {
        finished.add(pod);
      } else {
        String refusal = refusal(pod, options);
        if (refusal != null) {
          refused.add(key(pod) + " (" + refusal + ")");
        } else {
          evictable.add(pod);
        }
      }
    }
    return new DrainPlan(daemonSet, mirror, finished, terminating, evictable, refused);
  }

  /** Nothing left to evict or to wait for. */
  boolean drained() {
    return terminating.isEmpty() && evictable.isEmpty();
  }

  static String key(Pod pod) {
    return pod.getMetadata().getNamespace() + "/" + pod.getMetadata().getName();
  }

  private static String refusal(Pod pod, DrainOptions options) {
    if (!options.force() && controller(pod) == null) {
      return "not managed by a controller, it would not come back; allow with force";
    }
    if (!options.deleteEmptyDirData() && hasEmptyDir(pod)) {
      return "has emptyDir data that eviction deletes; allow with deleteEmptyDirData";
    }
    return null;
  }

  static OwnerReference controller(Pod pod) {
    List<OwnerReference> owners = pod.getMetadata().getOwnerReferences();
    if (owners == null) {
      return null;
    }
    return owners.stream()
        .filter(o -> Boolean.TRUE.equals(o.getController()))
        .findFirst()
        .orElse(null);
  }

  private static boolean isDaemonSetPod(Pod pod) {
    OwnerReference controller = controller(pod);
    return controller != null && "DaemonSet".equals(controller.getKind());
  }

  private static boolean isMirror(Pod pod) {
    Map<String, String> annotations = pod.getMetadata().getAnnotations();
    return annotations != null && annotations.containsKey(MIRROR_ANNOTATION);
  }

  private static boolean isFinished(Pod pod) {
    String phase = pod.getStatus() == null ? null : pod.getStatus().getPhase();
    return "Succeeded".equals(phase) || "Failed".equals(phase);
  }

  private static boolean hasEmptyDir(Pod pod) {
    return pod.getSpec() != null
        && pod.getSpec().getVolumes() != null
        && pod.getSpec().getVolumes().stream().anyMatch(v -> v.getEmptyDir() != null);
  }
}
