package dev.inplace.workflows.testing;

import static org.junit.jupiter.api.Assertions.fail;
import static org.mockito.Mockito.mock;
import static org.mockito.Mockito.withSettings;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.workflows.api.UpgradeStep;
import dev.inplace.workflows.api.NodePhase;
import dev.inplace.workflows.api.NodeStatus;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterInventory.PoolInfo;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.ObjectRef;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.RunSearchAttributes;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.UpgradeControls;
import dev.inplace.workflows.api.UpgradeProgress;
import io.temporal.common.SearchAttributeKey;
import io.temporal.testing.TestWorkflowEnvironment;
import io.temporal.testing.TestWorkflowExtension;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.IntStream;

/** Clusters, templates and helpers for the parent-run tests. */
public final class ParentFixtures {
  public static final ObjectRef CONTROL_PLANE =
      new ObjectRef("controlplane.cluster.x-k8s.io", "KThreesControlPlane", "edge-1-control-plane");
  public static final String POOL = "worker-a";
  public static final String OTHER_POOL = "worker-b";

  private ParentFixtures() {}

  /**
   * A test extension whose server knows every custom search attribute: the test server stalls a
   * workflow that upserts an unregistered one.
   */
  public static TestWorkflowExtension.Builder extension() {
    TestWorkflowExtension.Builder builder = TestWorkflowExtension.newBuilder().setDoNotStart(true);
    for (SearchAttributeKey<?> key : RunSearchAttributes.ALL) {
      builder.registerSearchAttribute(key.getName(), key.getValueType());
    }
    return builder;
  }

  /** A mock of the CAPI activities (registrable as an activity implementation). */
  public static ClusterApiActivities clusterApiMock() {
    return answersBatchedMarksOneByOne(mock(ClusterApiActivities.class, withSettings().withoutAnnotations()));
  }

  /**
   * Answers the mock's {@code markMachines} (the batches of parent runs) through its own {@code
   * markMachineUpgrading}, one Machine at a time as the real activity does ({@link
   * ClusterApiActivities#markEach}): tests stub and verify single marks whichever way a run marks.
   */
  public static ClusterApiActivities answersBatchedMarksOneByOne(ClusterApiActivities capi) {
    org.mockito.Mockito.lenient()
        .when(capi.markMachines(org.mockito.ArgumentMatchers.any()))
        .thenAnswer(inv -> ClusterApiActivities.markEach(inv.getArgument(0), capi::markMachineUpgrading));
    return capi;
  }

  public static NodeUpgradeTemplate template() {
    return new NodeUpgradeTemplate(
        Distribution.K3S,
        Fixtures.TO,
        List.of(Fixtures.k3sBinary(), Fixtures.images()),
        HostProfile.k3sDefaults(),
        new SshSettings("inplace", 2222, "edge-1-ssh-key", "edge-1-known-hosts", null),
        new DrainOptions(30, true, false, PdbBlockedAction.FAIL, false),
        60,
        0,
        "amd64");
  }

  /** Control-plane Machine {@code edge-1-cp-N} with Node {@code cp-N}. */
  public static MachineInfo controlPlane(int i, String version) {
    return new MachineInfo("edge-1-cp-" + i, "cp-" + i, NodeRole.CONTROL_PLANE, "10.0.0." + i, version, version, "");
  }

  /** Worker Machine {@code edge-1-<pool>-N} with Node {@code <pool>-N}. */
  public static MachineInfo worker(String pool, int i, String version) {
    return new MachineInfo(
        "edge-1-" + pool + "-" + i, pool + "-" + i, NodeRole.WORKER, "10.0.1." + i, version, version, pool);
  }

  public static List<MachineInfo> controlPlanes(int count, String version) {
    return IntStream.rangeClosed(1, count).mapToObj(i -> controlPlane(i, version)).toList();
  }

  public static List<MachineInfo> workers(String pool, int count, String version) {
    return IntStream.rangeClosed(1, count).mapToObj(i -> worker(pool, i, version)).toList();
  }

  public static ClusterInventory inventory(List<MachineInfo> machines) {
    List<String> pools = new ArrayList<>();
    for (MachineInfo m : machines) {
      if (!m.pool().isEmpty() && !pools.contains(m.pool())) {
        pools.add(m.pool());
      }
    }
    if (!pools.contains(OTHER_POOL)) {
      pools.add(OTHER_POOL);
    }
    return new ClusterInventory(
        Fixtures.CLUSTER,
        CONTROL_PLANE,
        machines.stream().filter(m -> m.role() == NodeRole.CONTROL_PLANE).map(MachineInfo::version).findFirst().orElse(""),
        machines,
        pools.stream()
            .map(p -> new PoolInfo(p, p + "-ms-1", Fixtures.FROM, (int) machines.stream().filter(m -> p.equals(m.pool())).count()))
            .toList());
  }

  public static List<MachineInfo> concat(List<MachineInfo> a, List<MachineInfo> b) {
    List<MachineInfo> all = new ArrayList<>(a);
    all.addAll(b);
    return all;
  }

  /**
   * Polls a run's progress until {@code condition} holds, letting workflow time pass in {@code step}s
   * between polls (children sleep on timers, which only advance while someone waits).
   */
  public static UpgradeProgress awaitProgress(
      TestWorkflowEnvironment env, UpgradeControls run, Duration step, Predicate<UpgradeProgress> condition) {
    UpgradeProgress last = null;
    for (int i = 0; i < 400; i++) {
      last = run.progress();
      if (condition.test(last)) {
        return last;
      }
      env.sleep(step);
    }
    return fail("progress never matched; last: " + last);
  }

  /**
   * The node is recorded with the failure {@link ChildScript#failsOnce} injected at verify:
   * NodeNotReady, rolled back, the child's own message.
   */
  public static void assertInjectedVerifyFailure(List<NodeStatus> nodes, String node) {
    NodeStatus failed = nodes.stream().filter(n -> n.node().equals(node)).findFirst().orElseThrow();
    org.junit.jupiter.api.Assertions.assertEquals(NodePhase.ROLLED_BACK, failed.phase());
    org.junit.jupiter.api.Assertions.assertEquals(UpgradeStep.VERIFY, failed.step());
    org.junit.jupiter.api.Assertions.assertEquals(UpgradeFailures.NODE_NOT_READY, failed.reason());
    org.junit.jupiter.api.Assertions.assertTrue(failed.message().contains("injected"), failed.message());
  }
}
