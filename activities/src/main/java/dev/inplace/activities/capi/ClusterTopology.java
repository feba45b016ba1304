package dev.inplace.activities.capi;

import dev.inplace.workflows.api.ClusterRef;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import java.util.Map;
import java.util.Optional;

/**
 * Whether a Cluster is managed through a ClusterClass ({@code spec.topology}): CAPI's topology
 * controller then owns the control-plane and MachineDeployment versions and would overwrite the
 * versions a run records, then roll out replacements. The custom resources' intake and the parents'
 * cluster read ({@code describeCluster}) both refuse such a cluster with this reason, so a run
 * started by hand is refused as the resources are.
 */
public final class ClusterTopology {
  private ClusterTopology() {}

  /** Why {@code cluster} is not upgraded by inplace, when it has {@code spec.topology}. */
  public static Optional<String> refusal(ClusterRef cluster, GenericKubernetesResource found) {
    Object spec = found == null ? null : found.getAdditionalProperties().get("spec");
    Object topology = spec instanceof Map<?, ?> m ? m.get("topology") : null;
    if (!(topology instanceof Map<?, ?> t)) {
      return Optional.empty();
    }
    Object klass = t.get("class"); // v1beta1
    if (klass == null && t.get("classRef") instanceof Map<?, ?> ref) {
      klass = ref.get("name"); // v1beta2
    }
    return Optional.of("Cluster " + cluster + " is managed by ClusterClass " + klass + " (spec.topology, version "
        + t.get("version") + "): its topology controller owns the control-plane and MachineDeployment versions; "
        + "the custom resources do not upgrade ClusterClass clusters: change spec.topology.version, and CAPI's in-place"
        + " update hooks call inplace's runtime extension for each Machine (docs/capi-extension.md)");
  }
}
