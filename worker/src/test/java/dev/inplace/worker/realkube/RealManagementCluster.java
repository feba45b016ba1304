package dev.inplace.worker.realkube;

import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestbedBinaries;
import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The test bed's real management control plane (etcd, kube-apiserver, kube-controller-manager), one
 * per test JVM: started on first use, stopped when the JVM exits. Each test works in namespaces of
 * its own.
 */
public final class RealManagementCluster {
  private static KubeControlPlane plane;

  private RealManagementCluster() {}

  public static synchronized KubeControlPlane plane() {
    if (plane == null) {
      try {
        Path dir = Files.createTempDirectory("inplace-realkube-");
        plane = KubeControlPlane.start("management", dir, TestbedBinaries.locate());
        Runtime.getRuntime().addShutdownHook(new Thread(plane::close, "testbed-stop"));
      } catch (IOException e) {
        throw new UncheckedIOException(e);
      }
    }
    return plane;
  }

  /** A client as the administrator, without fabric8's retries (a refusal answers at once). */
  public static KubernetesClient adminClient() {
    try {
      return client(Files.readString(plane().adminKubeconfig()));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  static KubernetesClient client(String kubeconfig) {
    Config config = Config.fromKubeconfig(kubeconfig);
    config.setRequestRetryBackoffLimit(0);
    return new KubernetesClientBuilder().withConfig(config).build();
  }
}
