package dev.inplace.sandbox.chaos;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.inplace.sandbox.stack.TemporalServer;
import java.util.List;
import org.junit.jupiter.api.Test;

class ChaosOptionsTest {
  @Test
  void theDefaultsAreThirtyNodesInThreeMachineDeploymentsFiftyKillsTwoWorkers() {
    ChaosOptions options = ChaosOptions.parse();

    assertEquals(30, options.nodes());
    assertEquals(3, options.pools());
    assertEquals(9, options.workersPerPool());
    assertEquals(50, options.kills());
    assertEquals(2, options.workers());
    assertEquals(30, options.demoOptions().controlPlanes() + options.demoOptions().pools() * options.demoOptions().workers());
  }

  @Test
  void sixNodesAreThreeControlPlanesAndThreeMachineDeploymentsOfOne() {
    ChaosOptions options = ChaosOptions.parse("--nodes", "6", "--kills", "8", "--ssh-drop", "10", "--seed", "7");

    assertEquals(3, options.pools());
    assertEquals(1, options.workersPerPool());
    assertEquals(7, options.seed());
    assertEquals(10, options.sshDropPercent());
  }

  @Test
  void aFailingNodeIsSkippedAfterItsRollback() {
    ChaosOptions options = ChaosOptions.parse("--fail", "worker-b-1:verify");

    List<String> args = options.demoArgs();
    assertTrue(args.containsAll(List.of("--fail", "worker-b-1:verify")), args.toString());
    assertEquals("skip", args.get(args.indexOf("--on-failure") + 1));
  }

  @Test
  void badInputGetsASpecificError() {
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosOptions.parse("--nodes", "8"))
        .getMessage().contains("do not split evenly"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosOptions.parse("--ssh-drop", "101"))
        .getMessage().contains("0..100"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosOptions.parse("--fail", "worker-1:nowhere"))
        .getMessage().contains("cannot inject"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosOptions.parse("--kills"))
        .getMessage().contains("needs a value"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosOptions.parse("--explode"))
        .getMessage().contains("unknown option"));
  }

  @Test
  void aFaultOnANodeTheEstateDoesNotHaveIsRefusedBeforeAnythingStarts() {
    String message = assertThrows(IllegalArgumentException.class,
        () -> ChaosOptions.parse("--nodes", "6", "--fail", "worker-a-1:verify")).getMessage();
    assertTrue(message.contains("no node 'worker-a-1'"), message);
    assertTrue(message.contains("[cp-0, cp-1, cp-2, worker-a-0, worker-b-0, worker-c-0]"), message);
    assertEquals(List.of("worker-a-0:verify"), ChaosOptions.parse("--nodes", "6", "--fail", "worker-a-0:verify").faults());
  }

  @Test
  void theServerIsTheTestServerUnkilledUnlessAskedAndTheDevServerCanBeKilled() {
    ChaosOptions defaults = ChaosOptions.parse();
    assertEquals(TemporalServer.TEST_SERVER, defaults.temporal());
    assertEquals(0, defaults.temporalKills());

    ChaosOptions killing = ChaosOptions.parse("--temporal", "dev-server", "--kill-temporal", "3");
    assertEquals(TemporalServer.DEV_SERVER, killing.temporal());
    assertEquals(3, killing.temporalKills());
  }

  @Test
  void killingTheServerIsRefusedOnTheTestServerWhichWouldLoseEveryRun() {
    String message = assertThrows(IllegalArgumentException.class, () -> ChaosOptions.parse("--kill-temporal", "1"))
        .getMessage();
    assertTrue(message.contains("--kill-temporal needs --temporal dev-server"), message);
    assertTrue(assertThrows(IllegalArgumentException.class,
            () -> ChaosOptions.parse("--temporal", "dev-server", "--kill-temporal", "-1"))
        .getMessage().contains("0 or more"));
    assertTrue(assertThrows(IllegalArgumentException.class, () -> ChaosOptions.parse("--temporal", "cloud"))
        .getMessage().contains("test-server or dev-server"));
  }
}
