package dev.inplace.sandbox.demo;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.workflows.api.Distribution;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class RealKubeDemoTest {
  @Test
  void kubeRealIsOptInAndMockIsTheDefaultDemo() {
    assertFalse(RealKubeDemo.wanted(List.of("--json")));
    assertFalse(RealKubeDemo.wanted(List.of("--kube", "mock", "--json")));
    assertTrue(RealKubeDemo.wanted(List.of("--kube", "real")));
    assertArrayEquals(new String[] {"--json"}, RealKubeDemo.withoutKube(new String[] {"--kube", "mock", "--json"}));
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RealKubeDemo.wanted(List.of("--kube", "kind")));
    assertTrue(e.getMessage().contains("--kube must be mock"), e.getMessage());
  }

  @Test
  void parsesTheDoorsAndVersionsTheRealTestBedOffers() {
    RealKubeDemo.Options o = RealKubeDemo.parse(List.of("--kube", "real", "--distribution", "kubeadm", "--mode", "extension",
        "--from", "v1.30.6", "--to", "v1.30.8", "--json"));
    assertEquals(new RealKubeDemo.Options(Distribution.KUBEADM, DemoOptions.Mode.EXTENSION, "v1.30.6", "v1.30.8", true), o);
    assertEquals(DemoOptions.Mode.CRS, RealKubeDemo.parse(List.of("--kube", "real", "--distribution", "kubeadm")).mode());
  }

  @Test
  void aClusterClassClusterGoesThroughTheHookDoorAndTheCustomResourceDoorIsRefusedPointingToIt() {
    RealKubeDemo.Options o = RealKubeDemo.parse(List.of("--kube", "real", "--distribution", "kubeadm", "--cluster-class",
        "--mode", "extension"));
    assertTrue(o.clusterClass(), "--cluster-class");
    assertEquals(false, RealKubeDemo.parse(List.of("--kube", "real", "--distribution", "kubeadm")).clusterClass());
    assertRefused("--cluster-class with --kube real goes through the hook door: give --mode extension",
        "--kube", "real", "--distribution", "kubeadm", "--cluster-class", "--mode", "crs");
    assertRefused("refuses topology-managed clusters by design", "--kube", "real", "--distribution", "kubeadm", "--cluster-class");
  }

  @Test
  void refusesWhatTheRealTestBedDoesNotOfferByName() {
    assertRefused("--kube real runs kubeadm clusters", "--kube", "real");
    assertRefused("--fail is not available with --kube real", "--kube", "real", "--distribution", "kubeadm", "--fail", "worker-0:restart");
    assertRefused("--mode with --kube real must be crs or extension", "--kube", "real", "--distribution", "kubeadm", "--mode", "workflows");
    assertRefused("must be newer than --from", "--kube", "real", "--distribution", "kubeadm", "--to", "v1.30.6");
    assertRefused("--from needs a Kubernetes version", "--kube", "real", "--distribution", "kubeadm", "--from", "1.30");
  }

  @Test
  void aMachineIsReplacedWhenItIsGoneOrHasAnotherUid() {
    Map<String, String> before = Map.of("a", "1", "b", "2", "c", "3");
    assertEquals(0, RealKubeDemo.replaced(before, Map.of("a", "1", "b", "2", "c", "3")));
    assertEquals(2, RealKubeDemo.replaced(before, Map.of("a", "1", "b", "9", "d", "4")));
  }

  @Test
  void hookCallsAreSummedPerHook() {
    assertEquals(Map.of("UpdateMachine", 7L, "CanUpdateMachine", 3L),
        RealKubeDemo.perHook(Map.of("UpdateMachine/Success", 5L, "UpdateMachine/Failure", 2L, "CanUpdateMachine/Success", 3L)));
  }

  private static void assertRefused(String expected, String... args) {
    IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> RealKubeDemo.parse(List.of(args)));
    assertTrue(e.getMessage().contains(expected), e.getMessage());
  }
}
