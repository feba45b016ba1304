package dev.inplace.sandbox.bench;

import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.HostActivities;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeActivities;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.ObjectRef;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * In-memory answers to the activities a WorkersUpgrade calls around its children, for clusters of
 * one pool each whose control plane already runs the target. Counts the bookkeeping calls
 * so the benchmark can check every node went through exactly once.
 */
final class BenchEstate {
  static final String POOL = "bench-pool";

  private final java.util.Map<String, Integer> poolSizes = new java.util.concurrent.ConcurrentHashMap<>();
  private final String from;
  private final String to;
  final AtomicInteger marks = new AtomicInteger();
  final AtomicInteger poolRecords = new AtomicInteger();

  BenchEstate(String from, String to) {
    this.from = from;
    this.to = to;
  }

  /** Declares a cluster whose one pool has {@code nodes} workers. */
  void addCluster(ClusterRef cluster, int nodes) {
    poolSizes.put(cluster.toString(), nodes);
  }

  ClusterApiActivities clusterApi() {
    return new ClusterApiActivities() {
      @Override
      public ClusterInventory describeCluster(ClusterRef cluster) {
        int nodes = poolSizes.getOrDefault(cluster.toString(), 0);
        List<MachineInfo> machines = new ArrayList<>();
        machines.add(new MachineInfo("bench-cp-0", "cp-0", NodeRole.CONTROL_PLANE, "127.0.0.1", to, to, ""));
        for (int i = 0; i < nodes; i++) {
          machines.add(new MachineInfo(cluster.name() + "-worker-" + i, "worker-" + i, NodeRole.WORKER, "127.0.0.1", from, from, POOL));
        }
        return new ClusterInventory(cluster, new ObjectRef("controlplane.cluster.x-k8s.io", "KThreesControlPlane", "bench"),
            to, machines, List.of(new ClusterInventory.PoolInfo(POOL, POOL + "-1", from, nodes)));
      }

      @Override
      public MachineMarkResult markMachineUpgrading(MachineMarkRequest request) {
        marks.incrementAndGet();
        return new MachineMarkResult(true);
      }

      @Override
      public MachineMarksResult markMachines(MachineMarksRequest request) {
        return ClusterApiActivities.markEach(request, this::markMachineUpgrading);
      }

      @Override
      public BookkeepingResult pauseControlPlane(ControlPlaneVersionRequest request) {
        return new BookkeepingResult(List.of());
      }

      @Override
      public BookkeepingResult releaseControlPlane(ControlPlaneVersionRequest request) {
        return new BookkeepingResult(List.of());
      }

      @Override
      public BookkeepingResult recordControlPlaneVersion(ControlPlaneVersionRequest request) {
        return new BookkeepingResult(List.of());
      }

      @Override
      public BookkeepingResult recordWorkerPoolVersion(PoolVersionRequest request) {
        poolRecords.incrementAndGet();
        return new BookkeepingResult(List.of("pool recorded"));
      }

      @Override
      public void confirmHostAccess(HostAccessCheck request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public MachineRecordResult recordMachineUpgrade(MachineRecordRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public MachineVersionResult recordMachineVersion(MachineVersionRequest request) {
        return new MachineVersionResult(from, true);
      }
    };
  }

  NodeActivities nodes() {
    return new NodeActivities() {
      @Override
      public NodesState inspectNodes(NodesRequest request) {
        return new NodesState(request.nodeNames().stream()
            .map(n -> new NodeState(n, true, false, n.startsWith("cp-") ? to : from, null)).toList(), List.of());
      }

      @Override
      public ControlPlaneHealth awaitControlPlaneHealthy(ControlPlaneCheckRequest request) {
        return new ControlPlaneHealth(true, List.of("cp-0 Ready at " + to));
      }

      @Override
      public NodeVersions controlPlaneVersions(ClusterRef ref) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public BudgetReport listBlockingBudgets(ClusterRef ref) {
        return new BudgetReport(List.of());
      }

      @Override
      public NodeState inspectNode(NodeRequest request) {
        return new NodeState(request.nodeName(), true, false, from, null);
      }

      @Override
      public CordonResult cordonNode(CordonRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public DrainResult drainNode(DrainRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public NodeState awaitNodeVersion(AwaitNodeRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public UncordonResult uncordonNode(UncordonRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }
    };
  }

  HostActivities hosts() {
    return new HostActivities() {
      @Override
      public ArtifactCheckResult verifyArtifacts(ArtifactCheckRequest request) {
        return new ArtifactCheckResult(request.artifacts().stream().map(a -> a.name()).toList());
      }

      @Override
      public HostFacts inspectHost(HostInspectRequest request) {
        throw new UnsupportedOperationException("not used by a WorkersUpgrade");
      }

      @Override
      public EtcdSnapshotResult snapshotEtcd(EtcdSnapshotRequest request) {
        throw new UnsupportedOperationException("not used by a WorkersUpgrade");
      }

      @Override
      public StageResult stageArtifacts(StageRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public BackupResult backupBinaries(BackupRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public InstallResult installArtifacts(InstallRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public UpgradeCommandResult runUpgradeCommand(UpgradeCommandRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public ServiceResult restartService(ServiceRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }

      @Override
      public RestoreResult restoreBinaries(RestoreRequest request) {
        throw new UnsupportedOperationException("the benchmark's node upgrades are simulated");
      }
    };
  }
}
