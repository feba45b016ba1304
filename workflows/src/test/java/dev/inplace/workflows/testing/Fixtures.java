package dev.inplace.workflows.testing;

import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactKind;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostActivities.HostFacts;
import dev.inplace.workflows.api.HostActivities.InstalledFile;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities.NodeState;
import dev.inplace.workflows.api.NodeActivities.NodesRequest;
import dev.inplace.workflows.api.NodeActivities.NodesState;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeTarget;
import dev.inplace.workflows.api.NodeUpgradeRequest;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.SshSettings;
import java.util.List;

/** Requests and observations shared by workflow tests. */
public final class Fixtures {
  public static final String FROM = "v1.30.4+k3s1";
  public static final String TO = "v1.31.2+k3s1";
  public static final String OLD_SHA = "a".repeat(64);
  public static final String NEW_SHA = "b".repeat(64);
  public static final String IMAGES_SHA = "c".repeat(64);
  public static final ClusterRef CLUSTER = new ClusterRef("fleet", "edge-1");

  private Fixtures() {}

  public static Artifact k3sBinary() {
    return new Artifact("k3s", ArtifactKind.BINARY, "/cache/k3s", NEW_SHA, 64 << 20, "/usr/local/bin/k3s", "0755");
  }

  public static Artifact images() {
    return new Artifact(
        "k3s-airgap-images",
        ArtifactKind.IMAGE_ARCHIVE,
        "/cache/images.tar",
        IMAGES_SHA,
        8 << 20,
        "/var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64-v1.31.2-k3s1.tar",
        "0644");
  }

  public static NodeUpgradeRequest request(String node, NodeRole role) {
    return new NodeUpgradeRequest(
        new NodeTarget(CLUSTER, node + "-machine", node, role, "127.0.0.11"),
        Distribution.K3S,
        TO,
        List.of(k3sBinary(), images()),
        HostProfile.k3sDefaults(),
        new SshSettings("inplace", 2222, "edge-1-ssh-key", "edge-1-known-hosts", null),
        new DrainOptions(30, true, false, PdbBlockedAction.FAIL, false),
        60,
        0,
        "amd64");
  }

  // ---- kubeadm ----------------------------------------------------------------------------------

  public static final String KUBEADM_FROM = "v1.30.6";
  public static final String KUBEADM_TO = "v1.31.2";
  public static final String OLD_KUBEADM_SHA = "1".repeat(64);
  public static final String OLD_KUBELET_SHA = "2".repeat(64);
  public static final String OLD_KUBECTL_SHA = "3".repeat(64);

  /** kubeadm, kubelet and kubectl in /usr/bin, and the image archive, of {@link #KUBEADM_TO}. */
  public static List<Artifact> kubeadmArtifacts() {
    return List.of(
        new Artifact("kubeadm", ArtifactKind.BINARY, "/cache/kubeadm", "4".repeat(64), 48 << 20, "/usr/bin/kubeadm", "0755"),
        new Artifact("kubelet", ArtifactKind.BINARY, "/cache/kubelet", "5".repeat(64), 56 << 20, "/usr/bin/kubelet", "0755"),
        new Artifact("kubectl", ArtifactKind.BINARY, "/cache/kubectl", "6".repeat(64), 48 << 20, "/usr/bin/kubectl", "0755"),
        new Artifact("kubernetes-images", ArtifactKind.IMAGE_ARCHIVE, "/cache/images.tar", "7".repeat(64), 200 << 20,
            "/var/lib/inplace/images/kubernetes-images-amd64-v1.31.2.tar", "0644"));
  }

  public static NodeUpgradeRequest kubeadmRequest(String node, NodeRole role, boolean firstControlPlane) {
    return new NodeUpgradeRequest(
        new NodeTarget(CLUSTER, node + "-machine", node, role, "127.0.0.11"),
        Distribution.KUBEADM,
        KUBEADM_TO,
        kubeadmArtifacts(),
        HostProfile.kubeadmDefaults(),
        new SshSettings("inplace", 2222, "edge-1-ssh-key", "edge-1-known-hosts", null),
        new DrainOptions(30, true, false, PdbBlockedAction.FAIL, false),
        60,
        0,
        "amd64",
        firstControlPlane);
  }

  public static HostFacts hostWithOldKubeadmRelease() {
    return new HostFacts(
        "amd64",
        10L << 30,
        List.of(
            new InstalledFile("/usr/bin/kubeadm", OLD_KUBEADM_SHA),
            new InstalledFile("/usr/bin/kubelet", OLD_KUBELET_SHA),
            new InstalledFile("/usr/bin/kubectl", OLD_KUBECTL_SHA),
            new InstalledFile(kubeadmArtifacts().get(3).installPath(), null)),
        KUBEADM_FROM,
        true);
  }

  public static NodeState readyAt(String node, String version) {
    return new NodeState(node, true, false, version, null);
  }

  /** An inspectNodes answer: each asked-for Node Ready at its Machine's kubelet version. */
  public static NodesState readyAtTheirKubelets(NodesRequest request, List<MachineInfo> machines) {
    return new NodesState(
        request.nodeNames().stream()
            .map(n -> readyAt(n, machines.stream().filter(m -> m.nodeName().equals(n)).findFirst()
                .orElseThrow().kubeletVersion()))
            .toList(),
        List.of());
  }

  public static HostFacts hostWithOldRelease() {
    return new HostFacts(
        "amd64",
        10L << 30,
        List.of(
            new InstalledFile("/usr/local/bin/k3s", OLD_SHA),
            new InstalledFile(images().installPath(), null)),
        FROM,
        true);
  }

  public static HostFacts hostWithNewRelease() {
    return new HostFacts(
        "amd64",
        10L << 30,
        List.of(
            new InstalledFile("/usr/local/bin/k3s", NEW_SHA),
            new InstalledFile(images().installPath(), IMAGES_SHA)),
        TO,
        true);
  }
}
