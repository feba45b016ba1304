package dev.inplace.sandbox.demo;

import static dev.inplace.sandbox.infra.CapiEstate.KUBEADM_CONTROL_PLANES;
import static dev.inplace.sandbox.infra.CapiEstate.MACHINE_DEPLOYMENTS;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.client.TemporalConnection;
import dev.inplace.sandbox.EmbeddedTemporal;
import dev.inplace.sandbox.infra.BedUpgradeResources;
import dev.inplace.sandbox.infra.CapiEstate;
import dev.inplace.sandbox.infra.ClusterClassSeed;
import dev.inplace.sandbox.infra.KubeadmClusterSeed;
import dev.inplace.sandbox.infra.RealCapiBed;
import dev.inplace.testbed.TestCa;
import dev.inplace.worker.InplaceWorker;
import dev.inplace.worker.crd.ControlPlaneUpgrade;
import dev.inplace.worker.crd.InplaceCrds;
import dev.inplace.worker.crd.UpgradePhase;
import dev.inplace.worker.crd.UpgradeStatus;
import dev.inplace.worker.crd.WorkersUpgrade;
import dev.inplace.worker.extension.CapiExtension;
import dev.inplace.worker.extension.ExtensionOptions;
import dev.inplace.worker.watch.UpgradeWatcher;
import dev.inplace.worker.watch.WatcherOptions;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.WorkflowIds;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.io.PrintStream;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * {@code ./inplace demo --kube real}: the demo on the test bed's real API servers and real Cluster
 * API managers ({@link RealCapiBed}) instead of the fabric8 mock server and the sandbox's CAPI
 * simulator. The hosts and the kubelet stay simulated (they are the nodes). A kubeadm cluster (3
 * control planes, a MachineDeployment of 2) is provisioned by CAPI, then upgraded through the
 * custom-resource door ({@code --mode crs}: a ControlPlaneUpgrade, then a WorkersUpgrade) or through
 * CAPI's own in-place hooks ({@code --mode extension}: the user changes the KubeadmControlPlane's and
 * the MachineDeployment's version). With {@code --cluster-class} the cluster is topology-managed
 * ({@link ClusterClassSeed}) and the user changes only {@code spec.topology.version} (hook door only).
 * The summary adds what the real Cluster API showed.
 */
public final class RealKubeDemo {
  static final String DEFAULT_FROM = "v1.30.6";
  static final String DEFAULT_TO = "v1.30.7";
  static final int CONTROL_PLANES = 3;
  static final int WORKERS = 2;
  static final Duration SETTLE = Duration.ofSeconds(20);

  /** What {@code --kube real} accepts; {@code clusterClass}: a topology-managed cluster (hook door only). */
  public record Options(Distribution distribution, DemoOptions.Mode mode, String from, String to, boolean json, boolean clusterClass) {
    public Options(Distribution distribution, DemoOptions.Mode mode, String from, String to, boolean json) {
      this(distribution, mode, from, to, json, false);
    }
  }

  private RealKubeDemo() {}

  /** Whether {@code args} ask for the real servers ({@code --kube real}); {@code --kube mock} is the default demo. */
  public static boolean wanted(List<String> args) {
    int at = args.indexOf("--kube");
    if (at < 0) {
      return false;
    }
    String value = at + 1 < args.size() ? args.get(at + 1) : "";
    return switch (value) {
      case "real" -> true;
      case "mock" -> false;
      default -> throw new IllegalArgumentException("--kube must be mock (default: the fabric8 mock API server and the"
          + " sandbox's CAPI simulator) or real (the test bed's API servers and Cluster API), got '" + value + "'");
    };
  }

  /** The arguments without {@code --kube mock}, for the default demo's parser. */
  public static String[] withoutKube(String[] args) {
    List<String> rest = new ArrayList<>(List.of(args));
    int at = rest.indexOf("--kube");
    if (at >= 0) {
      rest.remove(at);
      if (at < rest.size()) {
        rest.remove(at);
      }
    }
    return rest.toArray(String[]::new);
  }

  /** Parses the demo's arguments with {@code --kube real}; anything the real test bed does not offer is refused by name. */
  public static Options parse(List<String> args) {
    Distribution distribution = Distribution.K3S;
    DemoOptions.Mode mode = DemoOptions.Mode.CRS;
    String from = DEFAULT_FROM;
    String to = DEFAULT_TO;
    boolean json = false;
    boolean clusterClass = false;
    for (int i = 0; i < args.size(); i++) {
      String arg = args.get(i);
      switch (arg) {
        case "--kube" -> i++;
        case "--json" -> json = true;
        case "--cluster-class" -> clusterClass = true;
        case "--distribution" -> distribution = distribution(value(args, ++i, arg));
        case "--mode" -> mode = mode(value(args, ++i, arg));
        case "--from" -> from = version(value(args, ++i, arg), arg);
        case "--to" -> to = version(value(args, ++i, arg), arg);
        default -> throw new IllegalArgumentException(arg + " is not available with --kube real (it takes --distribution,"
            + " --mode, --from, --to, --cluster-class and --json)");
      }
    }
    if (distribution != Distribution.KUBEADM) {
      throw new IllegalArgumentException("--kube real runs kubeadm clusters (KubeadmControlPlane): give --distribution kubeadm."
          + " The k3s and k0s control planes (cluster-api-k3s, k0smotron) are not in the test bed yet (docs/testbed.md)");
    }
    if (KubeVersion.parse(to).compareTo(KubeVersion.parse(from)) <= 0) {
      throw new IllegalArgumentException("--to " + to + " must be newer than --from " + from);
    }
    if (clusterClass && mode != DemoOptions.Mode.EXTENSION) {
      throw new IllegalArgumentException("--cluster-class with --kube real goes through the hook door: give --mode extension."
          + " The custom-resource door refuses topology-managed clusters by design (TopologyManagedCluster: the topology"
          + " controller owns the versions) and points to the hook door; ./inplace demo --cluster-class shows that refusal");
    }
    return new Options(distribution, mode, from, to, json, clusterClass);
  }

  /** Runs the demo in {@code dir}; the summary's {@code allUpgraded()} says whether it succeeded. */
  public static DemoSummary run(Options options, Path dir, PrintStream out) throws Exception {
    boolean hooks = options.mode() == DemoOptions.Mode.EXTENSION;
    out.println("test bed: starting etcd, the management and workload API servers and Cluster API's managers");
    try (RealCapiBed bed = RealCapiBed.start(dir, List.of(options.from(), options.to()), hooks);
        TemporalConnection temporal = EmbeddedTemporal.start()) {
      KubernetesClient mgmt = bed.managementClient();
      CapiEstate estate = bed.estate();
      ArtifactSourcePolicy artifacts = ArtifactSourcePolicy.mirror(bed.releases().artifactsDir());
      List<AutoCloseable> doors = new ArrayList<>();
      try (InplaceWorker worker = InplaceWorker.start(temporal.client(), WorkflowIds.TASK_QUEUE, mgmt, dir.resolve("artifact-cache"), artifacts)) {
        CapiExtension extension = null;
        if (hooks) {
          TestCa.Issued serving = bed.management().ca().server("inplace-extension");
          extension = CapiExtension.start(ExtensionOptions.loopback(serving.cert(), serving.key(), bed.management().ca().certificate()),
              mgmt, temporal.client(), WorkflowIds.TASK_QUEUE, artifacts);
          doors.add(extension);
          bed.registerExtension(extension.port());
          out.println("runtime extension registered; Cluster API discovered its handlers");
        } else {
          InplaceCrds.install(mgmt);
          doors.add(UpgradeWatcher.start(mgmt, temporal.client(), WorkflowIds.TASK_QUEUE,
              WatcherOptions.defaults().withStatusInterval(Duration.ofSeconds(1)), artifacts));
        }
        if (options.clusterClass()) {
          bed.seedWithClusterClass(options.from(), CONTROL_PLANES, WORKERS, ClusterClassSeed.Upgrade.NONE);
        } else {
          bed.seed(options.from(), CONTROL_PLANES, WORKERS);
        }
        estate.await("Cluster API provisions " + (CONTROL_PLANES + WORKERS) + " Machines at " + options.from(), Duration.ofMinutes(8),
            () -> estate.provisioned(CONTROL_PLANES, WORKERS));
        out.printf("Cluster API %s provisioned %s: %d control planes, a MachineDeployment of %d, at %s%n",
            bed.capi().version(), RealCapiBed.CLUSTER, CONTROL_PLANES, WORKERS, options.from());
        double startup = ManagementFactory.getRuntimeMXBean().getUptime() / 1000.0;
        long started = System.nanoTime();
        Map<String, String> before = estate.machineUids();
        String ended = options.clusterClass() ? upgradeThroughTopology(estate, options.to(), out)
            : hooks ? upgradeThroughHooks(estate, options.to(), out) : upgradeThroughResources(bed, options, out);
        settle(estate, options.to(), out);
        double wall = (System.nanoTime() - started) / 1e9;
        DemoSummary summary = summary(bed, estate, before, options.to(), wall, startup, ended)
            .withCapi(bed.capi().runningVersion().orElse(bed.capi().version()), replaced(before, estate.machineUids()),
                extension == null ? null : perHook(extension.answeredCalls()));
        out.printf("%d/%d nodes upgraded to %s in %.1f s; Machines replaced: %d%n",
            summary.upgraded(), summary.nodes(), options.to(), wall, summary.machinesReplaced());
        return summary;
      } finally {
        for (AutoCloseable door : doors) {
          door.close();
        }
      }
    }
  }

  /** The custom-resource door: a ControlPlaneUpgrade, then a WorkersUpgrade; null, or why one did not succeed. */
  private static String upgradeThroughResources(RealCapiBed bed, Options options, PrintStream out) {
    KubernetesClient mgmt = bed.managementClient();
    mgmt.resource(BedUpgradeResources.controlPlane(bed.ssh(), options.distribution(), options.to())).create();
    out.println("applied ControlPlaneUpgrade " + BedUpgradeResources.CONTROL_PLANE);
    UpgradeStatus cp = BedUpgradeResources.awaitEnd(bed.estate(), mgmt, ControlPlaneUpgrade.class, BedUpgradeResources.CONTROL_PLANE,
        Duration.ofMinutes(10), () -> {});
    out.println("ControlPlaneUpgrade " + cp.getPhase() + ": " + cp.getMessage());
    if (cp.getPhase() != UpgradePhase.SUCCEEDED) {
      return "ControlPlaneUpgrade " + cp.getPhase() + ": " + cp.getMessage();
    }
    mgmt.resource(BedUpgradeResources.workers(bed.ssh(), options.distribution(), options.to())).create();
    out.println("applied WorkersUpgrade " + BedUpgradeResources.WORKERS);
    UpgradeStatus workers = BedUpgradeResources.awaitEnd(bed.estate(), mgmt, WorkersUpgrade.class, BedUpgradeResources.WORKERS,
        Duration.ofMinutes(10), () -> {});
    out.println("WorkersUpgrade " + workers.getPhase() + ": " + workers.getMessage());
    return workers.getPhase() == UpgradePhase.SUCCEEDED ? null : "WorkersUpgrade " + workers.getPhase() + ": " + workers.getMessage();
  }

  /** The hook door: the user's two version changes; Cluster API calls the extension. Null: every Machine reached the target. */
  private static String upgradeThroughHooks(CapiEstate estate, String to, PrintStream out) {
    estate.mergePatchSpec(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE, "{\"spec\":{\"version\":\"" + to + "\"}}");
    out.println("set KubeadmControlPlane " + KubeadmClusterSeed.CONTROL_PLANE + " spec.version " + to);
    estate.await("the control-plane Machines up to date at " + to, Duration.ofMinutes(10),
        () -> estate.machines().stream().filter(CapiEstate::controlPlane).allMatch(m -> CapiEstate.upToDateAt(m, to)));
    estate.mergePatchSpec(MACHINE_DEPLOYMENTS, KubeadmClusterSeed.MACHINE_DEPLOYMENT,
        "{\"spec\":{\"template\":{\"spec\":{\"version\":\"" + to + "\"}}}}");
    out.println("set MachineDeployment " + KubeadmClusterSeed.MACHINE_DEPLOYMENT + " spec.template.spec.version " + to);
    estate.await("every Machine up to date at " + to, Duration.ofMinutes(10),
        () -> estate.machines().stream().allMatch(m -> CapiEstate.upToDateAt(m, to)));
    return null;
  }

  /** The hook door on a topology-managed cluster: the user changes only spec.topology.version. */
  private static String upgradeThroughTopology(CapiEstate estate, String to, PrintStream out) {
    ClusterClassSeed.upgrade(estate, to);
    out.println("set Cluster " + RealCapiBed.CLUSTER + " spec.topology.version " + to);
    estate.await("every Machine up to date at " + to, Duration.ofMinutes(15),
        () -> estate.machines().stream().allMatch(m -> CapiEstate.upToDateAt(m, to)));
    return null;
  }

  /**
   * The settle check: every Machine UpToDate at {@code to} and none deleting; then one forced resync
   * of every object and {@link #SETTLE} of quiet, so a rollout CAPI would start shows in the UIDs.
   */
  private static void settle(CapiEstate estate, String to, PrintStream out) throws InterruptedException {
    estate.await("every Machine UpToDate at " + to + ", none deleting", Duration.ofMinutes(3),
        () -> estate.machines().stream().allMatch(m -> CapiEstate.upToDateAt(m, to)));
    estate.forceResync();
    out.printf("forced a resync of the Cluster, its control plane, MachineDeployment and Machines; settling %d s%n", SETTLE.toSeconds());
    Thread.sleep(SETTLE.toMillis());
  }

  private static DemoSummary summary(
      RealCapiBed bed, CapiEstate estate, Map<String, String> before, String to, double wall, double startup, String ended) {
    List<NodeOutcome> results = new ArrayList<>();
    for (GenericKubernetesResource m : estate.machines()) {
      String name = m.getMetadata().getName();
      Node node = bed.workloadClient().nodes().withName(name).get();
      String kubelet = node == null ? null : node.getStatus().getNodeInfo().getKubeletVersion();
      boolean upgraded = to.equals(kubelet) && CapiEstate.upToDateAt(m, to) && before.containsKey(name);
      results.add(new NodeOutcome(name, name, upgraded ? NodeOutcome.UPGRADED : NodeOutcome.FAILED, kubelet, null, null,
          upgraded ? null : (ended != null ? ended : "Node at " + kubelet + ", Machine UpToDate=" + CapiEstate.condition(m, "UpToDate"))));
    }
    long upgraded = results.stream().filter(NodeOutcome::upgraded).count();
    return new DemoSummary(results.size(), upgraded, results.size() - upgraded, 0, 0, to, round(wall), round(startup), results);
  }

  /** How many Machines of {@code before} are gone or have another UID. */
  static int replaced(Map<String, String> before, Map<String, String> after) {
    return (int) before.entrySet().stream().filter(e -> !e.getValue().equals(after.get(e.getKey()))).count();
  }

  /** The extension's answered calls ({@code "<hook>/<status>"}) summed per hook. */
  static Map<String, Long> perHook(Map<String, Long> answered) {
    Map<String, Long> calls = new TreeMap<>();
    answered.forEach((key, n) -> calls.merge(key.contains("/") ? key.substring(0, key.indexOf('/')) : key, n, Long::sum));
    return calls;
  }

  private static double round(double seconds) {
    return Math.round(seconds * 10) / 10.0;
  }

  private static String value(List<String> args, int i, String flag) {
    if (i >= args.size()) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args.get(i);
  }

  private static String version(String text, String flag) {
    try {
      KubeVersion.parse(text);
      return text;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(flag + " needs a Kubernetes version like v1.30.7, got '" + text + "'");
    }
  }

  private static Distribution distribution(String text) {
    for (Distribution d : Distribution.values()) {
      if (d.name().equalsIgnoreCase(text)) {
        return d;
      }
    }
    throw new IllegalArgumentException("--distribution must be k3s, kubeadm or k0s, got '" + text + "'");
  }

  private static DemoOptions.Mode mode(String text) {
    return switch (text) {
      case "crs" -> DemoOptions.Mode.CRS;
      case "extension" -> DemoOptions.Mode.EXTENSION;
      default -> throw new IllegalArgumentException("--mode with --kube real must be crs or extension, got '" + text + "'");
    };
  }
}
