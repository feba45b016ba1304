package dev.inplace.sandbox.estate;

import dev.inplace.sandbox.hosts.BinaryStart;
import dev.inplace.sandbox.hosts.SshFaults;
import dev.inplace.sandbox.truth.EstateReport;
import dev.inplace.sandbox.truth.HostJournal;
import dev.inplace.sandbox.truth.ScriptRun;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Reads the estate's ground truth into an {@link EstateReport}: API servers, journals, kubelet memory. */
final class GroundTruth {
  private static final List<String> MARK_PREFIXES = List.of("cluster.x-k8s.io/", "upgrade.inplace.dev/");

  private GroundTruth() {}

  static EstateReport read(
      KubernetesClient management,
      KubernetesClient workload,
      List<Estate.EstateNode> nodes,
      java.util.function.Function<String, java.nio.file.Path> rootOf,
      List<BinaryStart> starts,
      SshFaults ssh) {
    List<EstateReport.NodeReport> reports = new ArrayList<>();
    for (Estate.EstateNode n : nodes) {
      Node node = workload.nodes().withName(n.name()).get();
      GenericKubernetesResource machine =
          management.genericKubernetesResources(CapiObjects.MACHINE).inNamespace(Estate.NAMESPACE).withName(n.machine()).get();
      HostJournal journal = HostJournal.read(n.name(), rootOf.apply(n.name()));
      reports.add(
          new EstateReport.NodeReport(
              n.name(),
              n.role().name(),
              n.pool(),
              n.machine(),
              node == null || node.getStatus().getNodeInfo() == null ? "" : node.getStatus().getNodeInfo().getKubeletVersion(),
              node != null
                  && node.getStatus().getConditions() != null
                  && node.getStatus().getConditions().stream()
                      .anyMatch(c -> "Ready".equals(c.getType()) && "True".equals(c.getStatus())),
              node != null && node.getSpec() != null && Boolean.TRUE.equals(node.getSpec().getUnschedulable()),
              string(machine, "spec", "version"),
              string(machine, "status", "nodeInfo", "kubeletVersion"),
              marks(machine),
              journal.lines(),
              journal.openRuns().stream().map(ScriptRun::script).toList(),
              starts.stream().filter(s -> s.node().equals(n.name())).toList()));
    }
    GenericKubernetesResource cluster =
        management.genericKubernetesResources(CapiObjects.CLUSTER).inNamespace(Estate.NAMESPACE).withName(Estate.CLUSTER).get();
    String kind = string(cluster, "spec", "controlPlaneRef", "kind");
    GenericKubernetesResource cp =
        management.genericKubernetesResources(controlPlaneType(kind)).inNamespace(Estate.NAMESPACE).withName(Estate.CONTROL_PLANE).get();
    Map<String, String> cpAnnotations =
        cp == null || cp.getMetadata().getAnnotations() == null ? Map.of() : cp.getMetadata().getAnnotations();
    EstateReport.ClusterReport clusterReport =
        new EstateReport.ClusterReport(
            Estate.NAMESPACE,
            Estate.CLUSTER,
            "true".equals(string(cluster, "spec", "paused")),
            kind,
            Estate.CONTROL_PLANE,
            string(cp, "spec", "version"),
            // The sandbox's API server keeps a merge patch's null as a null value where a real one
            // deletes the key: a null is no annotation (found by the chaos campaign).
            cpAnnotations.get("cluster.x-k8s.io/paused") != null,
            cpAnnotations.get("upgrade.inplace.dev/paused-by") == null ? "" : cpAnnotations.get("upgrade.inplace.dev/paused-by"));
    SshFaults.Settings settings = ssh.settings();
    return new EstateReport(
        reports,
        List.of(clusterReport),
        new EstateReport.SshFaultReport(
            settings.dropPercent(), settings.hangPercent(), settings.seed(), ssh.dropped(), ssh.hung()));
  }

  private static ResourceDefinitionContext controlPlaneType(String kind) {
    return switch (kind) {
      case "KubeadmControlPlane" -> CapiObjects.KUBEADM_CONTROL_PLANE;
      case "K0sControlPlane" -> CapiObjects.K0S_CONTROL_PLANE;
      default -> CapiObjects.KTHREES_CONTROL_PLANE;
    };
  }

  private static Map<String, String> marks(GenericKubernetesResource machine) {
    Map<String, String> marks = new TreeMap<>();
    if (machine != null && machine.getMetadata().getAnnotations() != null) {
      machine.getMetadata().getAnnotations().forEach((k, v) -> {
        // A null value is a key a merge patch removed (the sandbox's API server keeps it as null).
        if (v != null && MARK_PREFIXES.stream().anyMatch(k::startsWith)) {
          marks.put(k, v);
        }
      });
    }
    return marks;
  }

  /** A string at {@code path} under the object's top-level fields, or empty. */
  private static String string(GenericKubernetesResource object, String... path) {
    if (object == null) {
      return "";
    }
    Object value = object.getAdditionalProperties().get(path[0]);
    for (int i = 1; i < path.length && value != null; i++) {
      value = value instanceof Map<?, ?> map ? map.get(path[i]) : null;
    }
    return value == null ? "" : value.toString();
  }
}
