package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import org.junit.jupiter.api.Test;

class DemoOptionsClusterClassTest {
  @Test
  void clusterClassIsOffByDefaultAndReachesTheEstate() {
    assertFalse(DemoOptions.parse().estateSpec().clusterClass());
    assertTrue(DemoOptions.parse("--cluster-class").clusterClass());
    assertTrue(DemoOptions.parse("--cluster-class", "--mode", "workflows").estateSpec().clusterClass());
  }

  @Test
  void theExtensionModeIsRefusedWithAClusterClass() {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
        () -> DemoOptions.parse("--cluster-class", "--mode", "extension"));
    assertTrue(e.getMessage().contains("--cluster-class"), e.getMessage());
  }

  @Test
  void theLocalStacksEstateGetsTheOptionToo() {
    assertTrue(DemoOptions.estateArgs(java.util.List.of("--cluster-class", "--json")).contains("--cluster-class"));
  }
}
