package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.UpgradeStep;
import org.junit.jupiter.api.Test;

class DemoOptionsKairosTest {

  @Test
  void osKairosReachesTheEstateAndTheResources() {
    DemoOptions kairos = DemoOptions.parse("--os", "kairos", "--distribution", "k0s");
    assertEquals(HostOs.KAIROS, kairos.os());
    assertEquals(HostOs.KAIROS, kairos.estateSpec().os());
    assertEquals(Distribution.K0S, kairos.estateSpec().distribution());
    assertEquals("kairos", DemoResources.workers(kairos, new dev.inplace.workflows.api.SshSettings(
        "inplace", 22, "k", "h", null)).getSpec().getHostProfile().getOs());
    assertEquals(HostOs.STANDARD, DemoOptions.parse().os());
  }

  @Test
  void kairosRebootFaultsAreArmedAtTheRestartStepAndNeedKairos() {
    DemoOptions.Fault boot = DemoOptions.parse("--os", "kairos", "--fail", "worker-a-0:boot").faults().get(0);
    assertEquals(new DemoOptions.Fault("worker-a-0", UpgradeStep.RESTART, "boot"), boot);
    assertEquals("return", DemoOptions.parse("--os", "kairos", "--fail", "cp-0:return").faults().get(0).kairosFault());
    IllegalArgumentException standard =
        assertThrows(IllegalArgumentException.class, () -> DemoOptions.parse("--fail", "worker-a-0:boot"));
    assertTrue(standard.getMessage().contains("need --os kairos"), standard.getMessage());
  }

  @Test
  void kairosRefusesKubeadmAndUnknownOses() {
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> DemoOptions.parse("--os", "kairos", "--distribution", "kubeadm")).getMessage().contains("not kubeadm"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DemoOptions.parse("--os", "flatcar"))
        .getMessage().contains("os must be standard or kairos"));
  }
}
