package dev.inplace.worker.watch;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.inplace.worker.crd.DrainSpec;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import io.fabric8.kubernetes.api.model.IntOrString;
import org.junit.jupiter.api.Test;

class SpecHashTest {
  private static WorkersUpgradeSpec spec() {
    return TestEstate.spec(new WorkersUpgradeSpec()).setMaxUnavailable(new IntOrString("25%"));
  }

  @Test
  void pausedIsTheOneFieldOutsideTheFrozenSpec() {
    assertEquals(SpecHash.of(spec()), SpecHash.of(spec().setPaused(true)));
  }

  @Test
  void anyOtherChangeChangesTheHash() {
    String frozen = SpecHash.of(spec());
    assertNotEquals(frozen, SpecHash.of(spec().setVersion("v1.31.3+k3s1")));
    assertNotEquals(frozen, SpecHash.of(spec().setMaxUnavailable(new IntOrString(2))));
    assertNotEquals(frozen, SpecHash.of(spec().setDrain(new DrainSpec().setTimeoutSeconds(60L))));
    assertNotEquals(frozen, SpecHash.of(spec().setDryRun(true)));
  }
}
