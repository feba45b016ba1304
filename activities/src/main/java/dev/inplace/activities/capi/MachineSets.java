package dev.inplace.activities.capi;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;

/** Which MachineSet of a MachineDeployment is the newest one, as the MD controller sees it. */
final class MachineSets {
  /**
   * Highest {@value CapiResources#REVISION_ANNOTATION} (compared as a number; a set without a
   * readable one is older than any set with one), then the newest creationTimestamp, then the name.
   */
  static final Comparator<GenericKubernetesResource> AGE =
      Comparator.comparingLong(MachineSets::revision)
          .thenComparing(MachineSets::createdAt)
          .thenComparing(ResourceFields::name, NaturalOrder.INSTANCE);

  private MachineSets() {}

  static Optional<GenericKubernetesResource> newest(List<GenericKubernetesResource> machineSets) {
    return machineSets.stream().max(AGE);
  }

  private static long revision(GenericKubernetesResource machineSet) {
    String text = ResourceFields.annotation(machineSet, CapiResources.REVISION_ANNOTATION);
    if (text == null) {
      return -1;
    }
    try {
      return Long.parseLong(text.trim());
    } catch (NumberFormatException e) {
      return -1;
    }
  }

  private static Instant createdAt(GenericKubernetesResource machineSet) {
    String text = machineSet.getMetadata().getCreationTimestamp();
    if (text == null) {
      return Instant.EPOCH;
    }
    try {
      return Instant.parse(text);
    } catch (DateTimeParseException e) {
      return Instant.EPOCH;
    }
  }
}
