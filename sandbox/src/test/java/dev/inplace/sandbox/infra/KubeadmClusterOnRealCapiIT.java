package dev.inplace.sandbox.infra;

import static dev.inplace.sandbox.infra.CapiEstate.KUBEADM_CONTROL_PLANES;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.testbed.CapiManagers;
import dev.inplace.testbed.KubeControlPlane;
import dev.inplace.testbed.TestbedBinaries;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

/**
 * The real Cluster API controllers (core, KubeadmControlPlane, kubeadm bootstrap) on the test bed's
 * real management API server provision a kubeadm cluster through the sandbox's infrastructure
 * provider: three control-plane Machines and a MachineDeployment of two, every Machine Running with
 * its Node on the real workload API server, the control plane initialized and its Machines healthy.
 * The ground every in-place proof on real CAPI stands on (those add the SSH hosts: {@link RealCapiBed}).
 */
@Timeout(600)
class KubeadmClusterOnRealCapiIT {
  static final String VERSION = "v1.30.6";

  @TempDir static Path dir;
  static KubeControlPlane management;
  static KubeControlPlane workload;
  static CapiManagers capi;
  static KubernetesClient mgmt;
  static KubernetesClient wl;
  static SandboxInfraProvider provider;
  static CapiEstate estate;

  @BeforeAll
  static void startTestBed() throws Exception {
    TestbedBinaries binaries = TestbedBinaries.locate();
    management = KubeControlPlane.start("management", dir.resolve("management"), binaries);
    workload = KubeControlPlane.start("workload", dir.resolve("workload"), binaries);
    capi = CapiManagers.start(management, dir.resolve("capi"), binaries);
    mgmt = RealCapiBed.client(management.adminKubeconfig());
    wl = RealCapiBed.client(workload.adminKubeconfig());
    estate = new CapiEstate(mgmt, KubeadmClusterSeed.NAMESPACE, KubeadmClusterSeed.CLUSTER, capi);
    int port = Integer.parseInt(workload.server().substring(workload.server().lastIndexOf(':') + 1));
    provider = SandboxInfraProvider.start(mgmt, "127.0.0.1", port, new KubeadmNodeBoot(mgmt, wl));
    KubeadmClusterSeed.seed(mgmt, workload, VERSION, 3, 2);
  }

  @AfterAll
  static void stop() {
    for (AutoCloseable c : new AutoCloseable[] {provider, mgmt, wl, capi, workload, management}) {
      try {
        if (c != null) {
          c.close();
        }
      } catch (Exception e) {
        // best effort
      }
    }
  }

  @Test
  void realControllersProvisionEveryMachineWithItsNodeOnTheWorkloadServer() {
    estate.await("5 Machines Running, KCP and MachineDeployment ready", Duration.ofMinutes(6), () -> estate.provisioned(3, 2));
    for (GenericKubernetesResource m : estate.machines()) {
      String node = String.valueOf(((Map<?, ?>) CapiEstate.status(m).get("nodeRef")).get("name"));
      assertEquals(SandboxInfraProvider.providerId(KubeadmClusterSeed.NAMESPACE, m.getMetadata().getName()),
          wl.nodes().withName(node).get().getSpec().getProviderID());
      assertEquals(VERSION, CapiEstate.spec(m).get("version"));
    }
    GenericKubernetesResource kcp = estate.get(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE);
    assertEquals(Boolean.TRUE, ((Map<?, ?>) CapiEstate.status(kcp).get("initialization")).get("controlPlaneInitialized"));
    assertTrue(capi.allAlive(), "every Cluster API manager still runs");
  }
}
