package dev.inplace.starter;

import com.fasterxml.jackson.annotation.JsonInclude;
import java.util.List;

/**
 * What {@code inplace describe cluster} shows: Cluster, control plane, MachineDeployments and their
 * Machines, with each Machine's node and in-place state, and the upgrade CRs naming the cluster.
 * The JSON/YAML output is this record; a field that could not be read is absent (null).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
record ClusterTree(
    String namespace,
    String name,
    String phase,
    /** Why node Ready/cordon are missing: the workload cluster could not be read. */
    String workloadError,
    ControlPlane controlPlane,
    List<Pool> machineDeployments,
    List<Upgrade> upgrades) {

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record ControlPlane(String kind, String name, String version, Long replicas, Long readyReplicas, List<Machine> machines) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Pool(String name, String version, Long replicas, Long readyReplicas, List<Machine> machines) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Machine(
      String name,
      String version,
      String phase,
      String node,
      Boolean nodeReady,
      Boolean cordoned,
      /** The node's phase in the in-place run (from the CR's status.nodes). */
      String inplacePhase,
      String step,
      String runId) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Upgrade(String kind, String name, String version, String phase, String progress, String message,
      List<Condition> conditions) {}

  @JsonInclude(JsonInclude.Include.NON_NULL)
  record Condition(String type, String status, String reason, String message) {}
}
