package dev.inplace.sandbox.faults;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.UpgradeStep;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class FaultInjectorTest {
  @TempDir Path hostsDir;
  private FaultInjector faults;
  private Path root;

  @BeforeEach
  void setUp() throws IOException {
    root = Files.createDirectories(hostsDir.resolve("worker-1"));
    faults = new FaultInjector(hostsDir);
  }

  @Test
  void armWritesTheTargetVersionWhereTheHostSideReadsIt() throws IOException {
    faults.arm("worker-1", UpgradeStep.RESTART, "v1.31.2+k3s1");
    assertEquals("v1.31.2+k3s1\n", Files.readString(root.resolve(".sandbox/faults/restart")));
    assertEquals(
        Optional.of("v1.31.2+k3s1"), FaultInjector.armedVersion(root, UpgradeStep.RESTART));
    assertEquals(Optional.empty(), FaultInjector.armedVersion(root, UpgradeStep.VERIFY));
  }

  @Test
  void armedListsEveryArmedStepIncludingDrain() {
    faults.arm("worker-1", UpgradeStep.DRAIN, "v2");
    faults.arm("worker-1", UpgradeStep.INSTALL, "v3");
    assertEquals(
        Map.of(UpgradeStep.DRAIN, "v2", UpgradeStep.INSTALL, "v3"), faults.armed("worker-1"));
  }

  @Test
  void clearRemovesOneStepOrAll() {
    faults.arm("worker-1", UpgradeStep.INSTALL, "v3");
    faults.arm("worker-1", UpgradeStep.VERIFY, "v3");
    faults.clear("worker-1", UpgradeStep.INSTALL);
    assertEquals(Map.of(UpgradeStep.VERIFY, "v3"), faults.armed("worker-1"));
    faults.clear("worker-1");
    assertTrue(faults.armed("worker-1").isEmpty());
    assertFalse(Files.exists(root.resolve(".sandbox/faults/verify")));
  }

  @Test
  void unsupportedStepIsRejectedWithTheSupportedOnesListed() {
    IllegalArgumentException e =
        assertThrows(
            IllegalArgumentException.class, () -> faults.arm("worker-1", UpgradeStep.CORDON, "v3"));
    assertEquals(
        "cannot inject a fault at step cordon; supported steps: preflight, stage, drain, backup,"
            + " install, upgrade, restart, verify, restore, snapshot",
        e.getMessage());
    assertThrows(
        IllegalArgumentException.class, () -> faults.clear("worker-1", UpgradeStep.UNCORDON));
  }

  @Test
  void unknownNodeOrBlankVersionIsRejected() {
    assertThrows(
        IllegalArgumentException.class, () -> faults.arm("worker-9", UpgradeStep.INSTALL, "v3"));
    assertThrows(
        IllegalArgumentException.class, () -> faults.arm("../etc", UpgradeStep.INSTALL, "v3"));
    assertThrows(
        IllegalArgumentException.class, () -> faults.arm("worker-1", UpgradeStep.INSTALL, " "));
  }
}
