package dev.inplace.worker.observe;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.util.List;
import org.junit.jupiter.api.Test;

class ShortCallHeartbeatInterceptorTest {
  /**
   * Regression (chaos campaign): a worker killed during DescribeCluster left the call to its
   * one-minute start-to-close timeout. Every short Kubernetes and Cluster API call now beats from a
   * side thread; the calls that beat their own progress are left alone.
   */
  @Test
  void theShortKubernetesAndClusterApiCallsBeatButTheSelfBeatingOnesAreLeftAlone() {
    for (String call : List.of("DescribeCluster", "InspectNode", "CordonNode", "UncordonNode", "MarkMachineUpgrading",
        "PauseControlPlane", "RecordMachineUpgrade", "RecordWorkerPoolVersion")) {
      assertTrue(ShortCallHeartbeatInterceptor.SHORT_CALLS.contains(call), call + " in " + ShortCallHeartbeatInterceptor.SHORT_CALLS);
    }
    for (String own : List.of("DrainNode", "AwaitNodeVersion", "AwaitControlPlaneHealthy", "StageArtifacts", "InstallArtifacts")) {
      assertFalse(ShortCallHeartbeatInterceptor.SHORT_CALLS.contains(own), own);
    }
  }
}
