package dev.inplace.activities.kube;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.PdbBlockedAction;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import java.util.List;
import org.junit.jupiter.api.Test;

class DrainPlanTest {
  private static final DrainOptions STRICT =
      new DrainOptions(60, false, false, PdbBlockedAction.FAIL, false);

  private static PodBuilder pod(String name) {
    return new PodBuilder()
        .withNewMetadata()
        .withNamespace("apps")
        .withName(name)
        .endMetadata()
        .withNewSpec()
        .withNodeName("w1")
        .endSpec()
        .withNewStatus()
        .withPhase("Running")
        .endStatus();
  }

  private static PodBuilder ownedBy(PodBuilder pod, String kind) {
    return pod.editMetadata()
        .addNewOwnerReference()
        .withApiVersion("apps/v1")
        .withKind(kind)
        .withName("owner")
        .withUid("uid-1")
        .withController(true)
        .endOwnerReference()
        .endMetadata();
  }

  private static List<String> names(List<Pod> pods) {
    return pods.stream().map(p -> p.getMetadata().getName()).toList();
  }

  @Test
  void classifiesPodsLikeKubectlDrain() {
    Pod daemon = ownedBy(pod("ds-1"), "DaemonSet").build();
    Pod mirror =
        pod("kube-apiserver-w1")
            .editMetadata()
            .addToAnnotations(DrainPlan.MIRROR_ANNOTATION, "abc")
            .endMetadata()
            .build();
    Pod done = pod("job-1").editStatus().withPhase("Succeeded").endStatus().build();
    Pod going =
        ownedBy(pod("web-0"), "ReplicaSet")
            .editMetadata()
            .withDeletionTimestamp("2026-01-01T00:00:00Z")
            .endMetadata()
            .build();
    Pod web = ownedBy(pod("web-1"), "ReplicaSet").build();

    DrainPlan plan = DrainPlan.of(List.of(web, going, done, mirror, daemon), STRICT);

    assertEquals(List.of("ds-1"), names(plan.daemonSet()));
    assertEquals(List.of("kube-apiserver-w1"), names(plan.mirror()));
    assertEquals(List.of("job-1"), names(plan.finished()));
    assertEquals(List.of("web-0"), names(plan.terminating()));
    assertEquals(List.of("web-1"), names(plan.evictable()));
    assertTrue(plan.refused().isEmpty(), plan.refused().toString());
  }

  @Test
  void refusesBarePodsWithoutForceAndEmptyDirWithoutPermission() {
    Pod bare = pod("bare").build();
    Pod scratch =
        ownedBy(pod("scratch"), "ReplicaSet")
            .editSpec()
            .addNewVolume()
            .withName("tmp")
            .withNewEmptyDir()
            .endEmptyDir()
            .endVolume()
            .endSpec()
            .build();

    DrainPlan strict = DrainPlan.of(List.of(bare, scratch), STRICT);
    DrainPlan permissive =
        DrainPlan.of(
            List.of(bare, scratch), new DrainOptions(60, true, true, PdbBlockedAction.FAIL, false));

    assertEquals(2, strict.refused().size());
    assertTrue(strict.refused().get(0).startsWith("apps/bare (not managed by a controller"));
    assertTrue(strict.refused().get(1).contains("apps/scratch (has emptyDir data"));
    assertTrue(strict.evictable().isEmpty());
    assertEquals(List.of("bare", "scratch"), names(permissive.evictable()));
  }
}
