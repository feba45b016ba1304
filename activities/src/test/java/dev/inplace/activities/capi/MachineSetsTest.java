package dev.inplace.activities.capi;

import static org.junit.jupiter.api.Assertions.assertEquals;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MachineSetsTest {
  @Test
  void highestRevisionWinsComparedAsANumber() {
    assertEquals(
        "b",
        newest(
            set("a", "9", "2026-01-02T00:00:00Z"),
            set("b", "10", "2026-01-01T00:00:00Z"),
            set("c", null, "2026-01-03T00:00:00Z")));
  }

  @Test
  void withoutRevisionsTheNewestCreationTimestampWinsThenTheName() {
    assertEquals(
        "old-but-later",
        newest(
            set("zzz", null, "2026-01-01T00:00:00Z"),
            set("old-but-later", null, "2026-01-02T00:00:00Z")));
    assertEquals(
        "ms-10",
        newest(
            set("ms-10", "x", "2026-01-01T00:00:00Z"), set("ms-9", null, "2026-01-01T00:00:00Z")));
  }

  @Test
  void noMachineSetsGiveNothing() {
    assertEquals(Optional.empty(), MachineSets.newest(List.of()));
  }

  private static String newest(GenericKubernetesResource... sets) {
    return MachineSets.newest(List.of(sets)).orElseThrow().getMetadata().getName();
  }

  private static GenericKubernetesResource set(String name, String revision, String created) {
    GenericKubernetesResource set = new GenericKubernetesResource();
    set.setMetadata(
        new ObjectMetaBuilder()
            .withName(name)
            .withCreationTimestamp(created)
            .withAnnotations(
                revision == null ? Map.of() : Map.of(CapiResources.REVISION_ANNOTATION, revision))
            .build());
    return set;
  }
}
