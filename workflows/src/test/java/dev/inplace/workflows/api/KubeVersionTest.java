package dev.inplace.workflows.api;

import static org.junit.jupiter.api.Assertions.assertEquals;
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
}
