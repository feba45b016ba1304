package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.worker.crd.InplaceHostProfile;
import dev.inplace.workflows.api.SshSettings;
import org.junit.jupiter.api.Test;

class DemoOptionsBinDirTest {
  private static final SshSettings SSH = new SshSettings("inplace", 22, "k", "h", null);

  @Test
  void binDirMakesTheResourcesNameAnAdministratorsHostProfileWithIt() {
    DemoOptions options = DemoOptions.parse("--bin-dir", "/run/evil");
    InplaceHostProfile profile = DemoResources.hostProfile(options).orElseThrow();
    assertEquals(DemoResources.HOST_PROFILE, profile.getMetadata().getName());
    assertEquals("/run/evil", profile.getSpec().getBinDir());
    assertEquals(DemoResources.HOST_PROFILE, DemoResources.controlPlane(options, SSH).getSpec().getHostProfile().getName());
    assertEquals(DemoResources.HOST_PROFILE, DemoResources.workers(options, SSH).getSpec().getHostProfile().getName());
    assertNull(DemoResources.workers(options, SSH).getSpec().getHostProfile().getOs());
  }

  @Test
  void withoutBinDirTheResourcesKeepTheStandardLayout() {
    DemoOptions options = DemoOptions.parse();
    assertTrue(DemoResources.hostProfile(options).isEmpty());
    assertNull(DemoResources.workers(options, SSH).getSpec().getHostProfile());
  }

  @Test
  void binDirMustBeAnAbsolutePathAndRunsThroughTheResourcesInProcess() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> DemoOptions.parse("--bin-dir", "run/evil;id"))
        .getMessage().startsWith("--bin-dir needs an absolute path"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> DemoOptions.parse("--bin-dir", "/run/evil", "--mode", "workflows")).getMessage()
        .contains("runs with --mode crs and --topology in-process"));
    assertTrue(assertThrows(IllegalArgumentException.class,
        () -> DemoOptions.parse("--bin-dir", "/run/evil", "--topology", "processes")).getMessage()
        .contains("runs with --mode crs and --topology in-process"));
  }
}
