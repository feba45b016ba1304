package dev.inplace.sandbox.truth;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.DeserializationFeature;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.sandbox.hosts.BinaryStart;
import java.util.List;
import java.util.Map;

/**
 * Ground truth of the estate, read by the sandbox from the API servers, the hosts' journals and the
 * kubelet simulator's memory, never from the product's own report. Served as JSON by the estate's
 * control endpoint ({@code GET /report}).
 *
 * @param nodes one entry per node, in the estate's order
 * @param clusters one entry per cluster
 * @param ssh the SSH faults' settings and counters
 */
public record EstateReport(List<NodeReport> nodes, List<ClusterReport> clusters, SshFaultReport ssh) {
  private static final ObjectMapper JSON =
      new ObjectMapper()
          .disable(DeserializationFeature.FAIL_ON_UNKNOWN_PROPERTIES);

  /**
   * @param name the Node (and host) name
   * @param role {@code CONTROL_PLANE} or {@code WORKER}
   * @param pool the MachineDeployment (empty for control planes)
   * @param machine the Machine's name
   * @param kubeletVersion the Node's status.nodeInfo.kubeletVersion
   * @param ready the Node's Ready condition is True
   * @param unschedulable the Node is cordoned (spec.unschedulable)
   * @param machineVersion the Machine's spec.version
   * @param machineNodeVersion the Machine's status.nodeInfo.kubeletVersion
   * @param marks the Machine's annotations under {@code cluster.x-k8s.io/} and {@code
   *     upgrade.inplace.dev/} (skip-remediation, paused-by, ...)
   * @param journal the host's journal, line by line, as the scripts wrote it
   * @param openScripts the journal's runs that began and never ended (template names, in order)
   * @param binaryStarts every start of the node's Kubernetes binary with the file's sha256
   */
  public record NodeReport(
      String name,
      String role,
      String pool,
      String machine,
      String kubeletVersion,
      boolean ready,
      boolean unschedulable,
      String machineVersion,
      String machineNodeVersion,
      Map<String, String> marks,
      List<String> journal,
      List<String> openScripts,
      List<BinaryStart> binaryStarts) {}

  /**
   * @param namespace the Cluster's namespace
   * @param name the Cluster's name
   * @param clusterPaused the Cluster's spec.paused
   * @param controlPlaneKind the kind of the Cluster's controlPlaneRef
   * @param controlPlaneName its name
   * @param controlPlaneVersion its spec.version
   * @param controlPlanePaused it carries {@code cluster.x-k8s.io/paused}
   * @param pausedBy its {@code upgrade.inplace.dev/paused-by} annotation (empty when none)
   */
  public record ClusterReport(
      String namespace,
      String name,
      boolean clusterPaused,
      String controlPlaneKind,
      String controlPlaneName,
      String controlPlaneVersion,
      boolean controlPlanePaused,
      String pausedBy) {}

  /**
   * @param dropPercent share of SSH commands and uploads whose connection is dropped
   * @param hangPercent share of SSH commands that never return
   * @param seed the faults' seed
   * @param sshDropped connections dropped so far
   * @param sshHung commands hung so far
   */
  public record SshFaultReport(int dropPercent, int hangPercent, long seed, long sshDropped, long sshHung) {}

  /** The journals of every node, parsed. */
  public List<HostJournal> journals() {
    return nodes.stream().map(n -> HostJournal.parse(n.name(), n.journal())).toList();
  }

  public String toJson() {
    try {
      return JSON.writeValueAsString(this);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot write the estate report", e);
    }
  }

  public static EstateReport fromJson(String json) {
    try {
      return JSON.readValue(json, EstateReport.class);
    } catch (JsonProcessingException e) {
      throw new IllegalArgumentException("not an estate report: " + e.getOriginalMessage(), e);
    }
  }
}
