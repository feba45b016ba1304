package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class KubeVersionTest {

  @Test
  void ordersK3sBuildsOfOnePatchByTheirNumber() {
    assertTrue(KubeVersion.parse("v1.31.2+k3s2").compareTo(KubeVersion.parse("v1.31.2+k3s1")) > 0);
    assertTrue(KubeVersion.parse("v1.31.2+k3s12").compareTo(KubeVersion.parse("v1.31.2+k3s2")) > 0);
    assertEquals(0, KubeVersion.parse("v1.31.2+k3s1").compareTo(KubeVersion.parse("v1.31.2+k3s1")));
  }

  @Test
  void ordersByMinorAndPatchBeforeTheBuild() {
    assertTrue(KubeVersion.parse("v1.31.0+k3s9").compareTo(KubeVersion.parse("v1.31.1+k3s1")) < 0);
    assertTrue(KubeVersion.parse("v1.30.9").compareTo(KubeVersion.parse("v1.31.0")) < 0);
    assertEquals(2, KubeVersion.parse("v1.29.1").minorsTo(KubeVersion.parse("v1.31.2+k3s1")));
  }

  @Test
  void ordersK0sBuildsOfOnePatchByTheirNumber() {
    assertTrue(KubeVersion.parse("v1.31.2+k0s.1").compareTo(KubeVersion.parse("v1.31.2+k0s.0")) > 0);
    assertTrue(KubeVersion.parse("v1.31.2+k0s.0").compareTo(KubeVersion.parse("v1.30.6+k0s.3")) > 0);
  }

  @Test
  void aK0sNodeReportingPlusK0sRunsEveryK0sBuildOfItsUpstreamVersion() {
    assertTrue(KubeVersion.nodeRuns("v1.31.2+k0s", "v1.31.2+k0s.0"));
    assertTrue(KubeVersion.nodeRuns("v1.31.2+k0s", "v1.31.2+k0s.1"));
    assertTrue(KubeVersion.nodeRuns("v1.31.2+k3s1", "v1.31.2+k3s1"));
    assertTrue(KubeVersion.nodeRuns("1.31.2", "v1.31.2"));
    assertFalse(KubeVersion.nodeRuns("v1.30.6+k0s", "v1.31.2+k0s.0"));
    assertFalse(KubeVersion.nodeRuns("v1.31.2+k3s1", "v1.31.2+k0s.0"));
    assertFalse(KubeVersion.nodeRuns("v1.31.2+k0s", "v1.31.2"));
    assertFalse(KubeVersion.nodeRuns("v1.31.2+k3s1", "v1.31.2+k3s2"));
    assertFalse(KubeVersion.nodeRuns(null, "v1.31.2+k0s.0"));
  }

  @Test
  void aMachineIsDoneWhenItsNodeRunsTheReleaseAndItsMachineRecordsThatBuild() {
    assertTrue(KubeVersion.machineAt("v1.31.2+k0s.1", "v1.31.2+k0s", "v1.31.2+k0s.1"));
    assertTrue(KubeVersion.machineAt("v1.31.2+k3s1", "v1.31.2+k3s1", "v1.31.2+k3s1"));
    // The Node reports +k0s for .0 and .1 alike: the Machine's spec.version tells them apart.
    assertFalse(KubeVersion.machineAt("v1.31.2+k0s.0", "v1.31.2+k0s", "v1.31.2+k0s.1"));
    assertFalse(KubeVersion.machineAt("v1.31.2+k0s.1", "v1.30.6+k0s", "v1.31.2+k0s.1"));
    assertFalse(KubeVersion.machineAt("", "v1.31.2+k0s", "v1.31.2+k0s.1"));
    assertFalse(KubeVersion.machineAt(null, "v1.31.2+k3s1", "v1.31.2+k3s1"));
  }
}
