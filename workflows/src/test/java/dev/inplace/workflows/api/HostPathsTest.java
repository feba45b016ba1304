package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.Optional;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

class HostPathsTest {
  @ParameterizedTest
  @EnumSource(Distribution.class)
  void acceptsEachDistributionsStandardLayout(Distribution d) {
    assertEquals(Optional.empty(), HostPaths.problem(d, d.defaultProfile()));
    assertEquals(Optional.empty(), HostPaths.problem(d, d.defaultProfile().withOs(HostOs.KAIROS)));
  }

  @ParameterizedTest(name = "{0} binDir={1} stagingDir={2} backupDir={3}")
  @CsvSource({
    "K3S, /opt/bin, /var/lib/inplace/stage, /var/lib/inplace/prev",
    "K3S, /usr/local/bin, /var/lib/inplace/a/staging, /var/lib/inplace/a/backup",
    "KUBEADM, /usr/local/bin, /var/lib/inplace/staging, /var/lib/inplace/backup",
    "K0S, /usr/bin, /var/lib/inplace/staging, /var/lib/inplace/backup",
  })
  void acceptsTheOtherDirectoriesOfTheAllowlist(Distribution d, String bin, String staging, String backup) {
    HostProfile p = d.defaultProfile();
    assertEquals(Optional.empty(), HostPaths.problem(d, new HostProfile(bin, p.imagesDir(), staging, backup,
        p.serverService(), p.agentService())));
  }

  @ParameterizedTest(name = "{0} binDir={1} imagesDir={2} stagingDir={3} backupDir={4}")
  @CsvSource({
    "K3S, /run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs/bin, , , , "
        + "binDir /run/containerd/io.containerd.runtime.v2.task/k8s.io/abc/rootfs/bin is not a k3s directory; "
        + "allowed: /usr/local/bin, /opt/bin",
    "K3S, /usr/bin, , , , binDir /usr/bin is not a k3s directory",
    "KUBEADM, /opt/bin, , , , binDir /opt/bin is not a kubeadm directory; allowed: /usr/bin, /usr/local/bin",
    "K3S, , /tmp, , , imagesDir /tmp is not a k3s directory; allowed: /var/lib/rancher/k3s/agent/images",
    "K3S, , , /etc, , stagingDir /etc is not a directory under /var/lib/inplace/",
    "K3S, , , /var/lib/inplace, , stagingDir /var/lib/inplace is not a directory under /var/lib/inplace/",
    "K3S, , , /var/lib/inplacex/staging, , stagingDir /var/lib/inplacex/staging is not a directory under",
    "K3S, , , , /root/.ssh, backupDir /root/.ssh is not a directory under /var/lib/inplace/",
    "K3S, , , /var/lib/inplace/backup, , "
        + "stagingDir /var/lib/inplace/backup and backupDir /var/lib/inplace/backup must be distinct directories",
    "K3S, , , /var/lib/inplace/backup/s, , "
        + "stagingDir /var/lib/inplace/backup/s and backupDir /var/lib/inplace/backup must be distinct directories, "
        + "neither inside the other",
  })
  void refusesADirectoryOutsideTheAllowlistNamingTheFieldAndTheAllowedOnes(
      Distribution d, String bin, String images, String staging, String backup, String expected) {
    HostProfile p = d.defaultProfile();
    HostProfile asked = new HostProfile(bin == null ? p.binDir() : bin, images == null ? p.imagesDir() : images,
        staging == null ? p.stagingDir() : staging, backup == null ? p.backupDir() : backup, p.serverService(),
        p.agentService());
    Optional<String> problem = HostPaths.problem(d, asked);
    assertTrue(problem.isPresent() && problem.get().startsWith(expected), problem.toString());
  }
}
