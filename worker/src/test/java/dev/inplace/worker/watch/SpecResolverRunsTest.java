package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import org.junit.jupiter.api.Test;

/** The intake's "control plane at the target" for a WorkersUpgrade CR holds k0s versions as the Node reports them. */
class SpecResolverRunsTest {

  private static MachineInfo controlPlane(String version, String kubelet) {
    return new MachineInfo("edge-1-cp-0", "cp-0", NodeRole.CONTROL_PLANE, "10.0.0.1", version, kubelet, "");
  }

  @Test
  void aK0sControlPlaneReportingPlusK0sRunsAPlusK0sOneTarget() {
    assertTrue(SpecResolver.runs(controlPlane("v1.31.2+k0s.1", "v1.31.2+k0s"), "v1.31.2+k0s.1"));
    assertFalse(SpecResolver.runs(controlPlane("v1.30.6+k0s.0", "v1.30.6+k0s"), "v1.31.2+k0s.1"));
    assertTrue(SpecResolver.runs(controlPlane("v1.31.2+k3s1", "v1.31.2+k3s1"), "v1.31.2+k3s1"));
    assertFalse(SpecResolver.runs(controlPlane("v1.30.6+k3s1", "v1.30.6+k3s1"), "v1.31.2+k3s1"));
  }
}
