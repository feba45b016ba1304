package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class VersionSkewTest {

  private static MachineInfo machine(String version, String kubelet) {
    return new MachineInfo("edge-1-cp-1", "cp-1", NodeRole.CONTROL_PLANE, "10.0.0.1", version, kubelet, "");
  }

  @Test
  void aMachineRunsTheTargetAsItsNodeReportsIt() {
    assertTrue(VersionSkew.runs(machine("v1.31.2+k0s.1", "v1.31.2+k0s"), "v1.31.2+k0s.1"));
    assertTrue(VersionSkew.runs(machine("v1.31.2+k3s1", "v1.31.2+k3s1"), "v1.31.2+k3s1"));
    assertFalse(VersionSkew.runs(machine("v1.30.6+k0s.0", "v1.30.6+k0s"), "v1.31.2+k0s.1"));
    assertFalse(VersionSkew.runs(machine("v1.31.2+k3s1", "v1.31.2+k3s1"), "v1.31.2+k3s2"));
  }

  @Test
  void withoutANodeVersionTheMachineVersionMustBeTheTarget() {
    assertTrue(VersionSkew.runs(machine("v1.31.2+k0s.1", ""), "v1.31.2+k0s.1"));
    assertFalse(VersionSkew.runs(machine("v1.31.2+k0s.0", null), "v1.31.2+k0s.1"));
    assertFalse(VersionSkew.runs(machine("", ""), "v1.31.2+k0s.1"));
  }
}
