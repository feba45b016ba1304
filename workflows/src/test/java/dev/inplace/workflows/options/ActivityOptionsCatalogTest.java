package dev.inplace.workflows.options;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.temporal.activity.ActivityOptions;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ActivityOptionsCatalogTest {
  /**
   * Regression (chaos campaign, docs/reliability.md): a worker killed during a host step left the step
   * to its start-to-close timeout (3 minutes for host steps, 30 for an artifact fetch) before the
   * retry. Every activity that runs on a host or downloads heartbeats, with a timeout of seconds.
   */
  @Test
  void everyHostStepHasAHeartbeatTimeoutOfSecondsSoADeadWorkersStepIsRetriedQuickly() {
    Map<String, ActivityOptions> steps = Map.of(
        "hostStep", ActivityOptionsCatalog.hostStep(),
        "staging", ActivityOptionsCatalog.staging(),
        "etcdSnapshot", ActivityOptionsCatalog.etcdSnapshot(),
        "distributionUpgrade", ActivityOptionsCatalog.distributionUpgrade(),
        "artifactFetch", ActivityOptionsCatalog.artifactFetch(),
        "drain", ActivityOptionsCatalog.drain(20),
        "awaitNode", ActivityOptionsCatalog.awaitNode(20),
        "kubeCall", ActivityOptionsCatalog.kubeCall());
    steps.forEach((name, options) -> {
      Duration heartbeat = options.getHeartbeatTimeout();
      assertNotNull(heartbeat, name + " has no heartbeat timeout");
      assertTrue(heartbeat.compareTo(Duration.ofSeconds(30)) <= 0, name + " heartbeat timeout " + heartbeat);
      assertTrue(heartbeat.multipliedBy(4).compareTo(options.getStartToCloseTimeout()) <= 0,
          name + ": heartbeat timeout " + heartbeat + " is not well under start-to-close " + options.getStartToCloseTimeout());
    });
  }

  /**
   * Regression (chaos campaign, 30 nodes, seed 1): the etcd snapshot had 3 attempts; two went to
   * killed workers and the third to a dropped connection, and the whole ControlPlaneUpgrade failed.
   * Every step that runs scripts over SSH leaves room for two dead workers and two lost connections.
   */
  @Test
  void everyStepOnAHostSurvivesTwoDeadWorkersAndARunOfLostConnections() {
    Map<String, ActivityOptions> steps = Map.of(
        "hostStep", ActivityOptionsCatalog.hostStep(),
        "staging", ActivityOptionsCatalog.staging(),
        "etcdSnapshot", ActivityOptionsCatalog.etcdSnapshot(),
        "distributionUpgrade", ActivityOptionsCatalog.distributionUpgrade());
    steps.forEach((name, options) -> {
      assertEquals(10, options.getRetryOptions().getMaximumAttempts(), name);
      assertTrue(options.getRetryOptions().getMaximumInterval().compareTo(Duration.ofSeconds(30)) <= 0, name);
    });
  }
}
