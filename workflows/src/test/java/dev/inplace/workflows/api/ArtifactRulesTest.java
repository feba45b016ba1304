package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class ArtifactRulesTest {
  private static Artifact artifact(ArtifactKind kind, String source, String installPath) {
    return new Artifact("a", kind, source, "ab".repeat(32), 1, installPath, "0755");
  }

  @ParameterizedTest(name = "{0} {1} {2} {3}")
  @CsvSource({
    "K3S, BINARY, https://x.example/k3s, /usr/local/bin/k3s",
    "K3S, BINARY, file:/mirror/k3s, /opt/bin/k3s",
    "K3S, BINARY, /mirror/k3s, /usr/local/bin/k3s",
    "K3S, IMAGE_ARCHIVE, https://x.example/i, /var/lib/rancher/k3s/agent/images/k3s-airgap-images-amd64.tar.zst",
    "KUBEADM, BINARY, https://x.example/kubelet, /usr/bin/kubelet",
    "KUBEADM, BINARY, https://x.example/kubeadm, /usr/local/bin/kubeadm",
    "KUBEADM, IMAGE_ARCHIVE, https://x.example/i, /var/lib/inplace/images/kubernetes-images-amd64-v1.31.2.tar",
    "K0S, BINARY, https://x.example/k0s, /usr/local/bin/k0s",
    "K0S, IMAGE_ARCHIVE, https://x.example/b, /var/lib/k0s/images/k0s-airgap-bundle-v1.31.2-k0s.0-amd64",
  })
  void acceptsTheDistributionsLayout(Distribution d, ArtifactKind kind, String source, String path) {
    assertEquals(Optional.empty(), ArtifactRules.problem(List.of(artifact(kind, source, path)), d));
  }

  @ParameterizedTest(name = "{0} {1} {2} {3}")
  @CsvSource({
    "K3S, BINARY, https://x.example/k3s, /usr/bin/sudo, outside the distribution's layout",
    "K3S, BINARY, https://x.example/k3s, /usr/local/bin/kubelet, outside the distribution's layout",
    "K3S, BINARY, https://x.example/k3s, /root/.ssh/authorized_keys, outside the distribution's layout",
    "K3S, BINARY, https://x.example/k3s, /etc/systemd/system/k3s, outside the distribution's layout",
    "K3S, IMAGE_ARCHIVE, https://x.example/i, /var/lib/rancher/k3s/agent/images/sub/x.tar, outside",
    "K3S, IMAGE_ARCHIVE, https://x.example/i, /var/lib/rancher/k3s/agent/images/x.sh, outside",
    "K3S, BINARY, https://x.example/k3s, /var/lib/rancher/k3s/agent/images/k3s, outside",
    "KUBEADM, BINARY, https://x.example/k, /usr/local/bin/k3s, outside the distribution's layout",
    "KUBEADM, IMAGE_ARCHIVE, https://x.example/i, /var/lib/rancher/k3s/agent/images/x.tar, outside",
    "K0S, BINARY, https://x.example/k0s, /usr/local/bin/k3s, outside the distribution's layout",
    "K3S, BINARY, http://x.example/k3s, /usr/local/bin/k3s, source scheme http is not allowed",
    "K3S, BINARY, ftp://x.example/k3s, /usr/local/bin/k3s, source scheme ftp is not allowed",
    "K3S, BINARY, relative/k3s, /usr/local/bin/k3s, source scheme (none) is not allowed",
  })
  void refusesAnythingElseWithTheReason(Distribution d, ArtifactKind kind, String source, String path, String why) {
    Optional<String> problem = ArtifactRules.problem(List.of(artifact(kind, source, path)), d);
    assertTrue(problem.isPresent() && problem.get().contains(why), problem.toString());
  }
}
