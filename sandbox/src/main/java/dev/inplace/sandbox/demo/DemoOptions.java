package dev.inplace.sandbox.demo;

import dev.inplace.sandbox.estate.EstateSpec;
import dev.inplace.sandbox.faults.FaultInjector;
import dev.inplace.sandbox.hosts.HostServer;
import dev.inplace.sandbox.release.FakeReleaseSizes;
import dev.inplace.sandbox.stack.TemporalServer;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.UpgradeStep;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

/** The demo's command line, parsed strictly: an unknown or malformed flag is an error, not ignored. */
public record DemoOptions(
    Mode mode,
    int controlPlanes,
    int pools,
    int workers,
    String maxUnavailable,
    OnFailure onFailure,
    String from,
    String to,
    boolean json,
    List<Fault> faults,
    long binaryBytes,
    long drainTimeoutSeconds,
    long readyTimeoutSeconds,
    boolean keep,
    Distribution distribution,
    HostServer hosts,
    Topology topology,
    int workerProcesses,
    double restartSeconds,
    boolean clusterClass,
    HostOs os,
    TemporalServer temporal,
    String binDir) {

  /** Options on Temporal's test server, the distribution's own host layout. */
  public DemoOptions(
      Mode mode, int controlPlanes, int pools, int workers, String maxUnavailable, OnFailure onFailure,
      String from, String to, boolean json, List<Fault> faults, long binaryBytes, long drainTimeoutSeconds,
      long readyTimeoutSeconds, boolean keep, Distribution distribution, HostServer hosts, Topology topology,
      int workerProcesses, double restartSeconds, boolean clusterClass, HostOs os) {
    this(mode, controlPlanes, pools, workers, maxUnavailable, onFailure, from, to, json, faults, binaryBytes,
        drainTimeoutSeconds, readyTimeoutSeconds, keep, distribution, hosts, topology, workerProcesses, restartSeconds,
        clusterClass, os, TemporalServer.TEST_SERVER, null);
  }

  /** Options on standard hosts with their distribution's own layout. */
  public DemoOptions(
      Mode mode, int controlPlanes, int pools, int workers, String maxUnavailable, OnFailure onFailure,
      String from, String to, boolean json, List<Fault> faults, long binaryBytes, long drainTimeoutSeconds,
      long readyTimeoutSeconds, boolean keep, Distribution distribution, HostServer hosts, Topology topology,
      int workerProcesses, double restartSeconds, boolean clusterClass) {
    this(mode, controlPlanes, pools, workers, maxUnavailable, onFailure, from, to, json, faults, binaryBytes,
        drainTimeoutSeconds, readyTimeoutSeconds, keep, distribution, hosts, topology, workerProcesses, restartSeconds,
        clusterClass, HostOs.STANDARD);
  }

  public DemoOptions {
    os = HostOs.orStandard(os);
    temporal = temporal == null ? TemporalServer.TEST_SERVER : temporal;
  }

  /** Where the demo's parts run. */
  public enum Topology {
    /** Temporal's test server, the estate and the worker inside the demo's own JVM. */
    IN_PROCESS,
    /** The local stack: the test server, the estate and each worker as its own OS process (docs/local-stack.md). */
    PROCESSES
  }

  /** Options without a host server choice: MINA hosts. */
  public DemoOptions(
      Mode mode, int controlPlanes, int pools, int workers, String maxUnavailable, OnFailure onFailure,
      String from, String to, boolean json, List<Fault> faults, long binaryBytes, long drainTimeoutSeconds,
      long readyTimeoutSeconds, boolean keep, Distribution distribution) {
    this(mode, controlPlanes, pools, workers, maxUnavailable, onFailure, from, to, json, faults, binaryBytes,
        drainTimeoutSeconds, readyTimeoutSeconds, keep, distribution, HostServer.MINA, Topology.IN_PROCESS, 2,
        DEFAULT_RESTART_SECONDS, false);
  }

  /** How the demo starts the upgrade. */
  public enum Mode {
    /** Apply ControlPlaneUpgrade and WorkersUpgrade custom resources; the worker's watcher runs them. */
    CRS,
    /** Start the ControlPlaneUpgrade and WorkersUpgrade workflows directly, as the CLI would. */
    WORKFLOWS,
    /**
     * Serve the CAPI runtime extension over HTTPS and let a simulated CAPI (control plane,
     * MachineDeployment, MachineSet and Machine controllers) upgrade the cluster through its hooks.
     */
    EXTENSION
  }

  /** What the demo does, as the operator, when a run halts on a failed node. */
  public enum OnFailure {
    /** Leave it halted: abort the run (in-flight nodes finish) and exit non-zero. */
    HALT,
    /** Skip the failed node and let the run go on. */
    SKIP,
    /** Clear the injected fault and retry the node. */
    RETRY
  }

  /** A fault to inject: {@code --fail NODE:STEP}. */
  /**
   * A fault to inject: at {@code step}, or for Kairos nodes a reboot fault ({@code boot}: the new
   * image does not boot; {@code return}: the node never comes back), which shows at the restart step.
   */
  public record Fault(String node, UpgradeStep step, String kairosFault) {
    public Fault(String node, UpgradeStep step) {
      this(node, step, null);
    }

    /** How the demo names it: the step, or the Kairos fault. */
    public String label() {
      return kairosFault == null ? step.cliName() : kairosFault + " (Kairos reboot, seen at " + step.cliName() + ")";
    }
  }

  /** How long a restarted node's kubelet stays NotReady: the simulated service restart. */
  public static final double DEFAULT_RESTART_SECONDS = 1.0;

  public static final List<UpgradeStep> FAULT_STEPS =
      List.of(UpgradeStep.SNAPSHOT, UpgradeStep.PREFLIGHT, UpgradeStep.STAGE, UpgradeStep.DRAIN, UpgradeStep.BACKUP,
          UpgradeStep.INSTALL, UpgradeStep.UPGRADE, UpgradeStep.RESTART, UpgradeStep.VERIFY);

  public static final String USAGE =
      """
      usage: inplace demo [options]
        --mode MODE            crs (default): apply ControlPlaneUpgrade and WorkersUpgrade resources and
                               follow their status; workflows: start the runs directly;
                               extension: a simulated CAPI calls the runtime extension's hooks
        --control-planes N     control-plane nodes (default 3)
        --pools N              MachineDeployments (default 2; kubeadm 1); workers are worker-a-0.., worker-b-0..
                               (with --pools 1: worker-0..)
        --workers N            worker nodes per MachineDeployment (default 3)
        --max-unavailable N    workers upgraded at once per MachineDeployment: a count or N%% (default 1)
        --on-failure ACTION    when a node fails: halt (abort, exit non-zero), skip (go on without it)
                               or retry (clear the injected fault, run it again) (default halt)
        --distribution D       k3s (default), kubeadm or k0s: the cluster's Kubernetes distribution
        --os OS                standard (default) or kairos: Kairos hosts (k3s or k0s) get an OS image
                               (kairos-agent upgrade) and reboot into it; the fallback image is the rollback
        --from VERSION         version the estate starts on (default %s; kubeadm %s; k0s %s)
        --to VERSION           version to upgrade to (default %s; kubeadm %s; k0s %s)
        --fail NODE:STEP       inject a failure, e.g. worker-1:restart (repeatable);
                               steps: %s (upgrade: kubeadm only);
                               with --os kairos also boot (the new image does not boot) and return
                               (the node never comes back after its reboot)
        --binary-size-mib N    size of the fake k3s binary (default 32)
        --drain-timeout S      seconds a drain may be blocked by a PodDisruptionBudget (default 20)
        --ready-timeout S      seconds a node may take to be Ready at a version (default 20)
        --restart-seconds S    seconds a restarted kubelet stays NotReady (default 1; 0..600)
        --hosts KIND           mina (default): embedded SSH servers; openssh: one real sshd per node
                               (needs root and openssh-server: apt-get install -y openssh-server)
        --topology T           in-process (default): everything in the demo's JVM; processes: Temporal's
                               test server, the estate and each worker as its own OS process (the CR path)
        --worker-processes N   worker processes with --topology processes (default 2)
        --temporal SERVER      with --topology processes: test-server (default): Temporal's Java test
                               server; dev-server: the real Temporal server (temporal server start-dev,
                               built by ./inplace testbed build temporal) with SQLite, List visibility
                               and its Web UI, whose URL is printed
        --cluster-class        manage the Cluster through a ClusterClass (spec.topology): inplace refuses
                               it (TopologyManagedCluster) with the crs and workflows modes, changing nothing
        --bin-dir PATH         the resources name an administrator's InplaceHostProfile with this binDir; one
                               outside the distribution's own (e.g. /run/evil) is refused (InvalidRequest)
                               before any SSH session (docs/security.md, H1); crs mode, in-process only
        --kube K               mock (default): the fabric8 mock API server and the sandbox's CAPI simulator;
                               real: the test bed's real API servers and Cluster API managers (kubeadm,
                               3 control planes and 2 workers, v1.30.6 -> v1.30.7; takes --distribution
                               kubeadm, --mode crs|extension, --from, --to, --json, and --cluster-class
                               with --mode extension: only spec.topology.version changes; docs/testbed.md)
        --json                 end with one JSON line summarising the run
        --keep                 keep the estate directory for inspection
      """
          .formatted(EstateSpec.DEFAULT_FROM, EstateSpec.DEFAULT_KUBEADM_FROM, EstateSpec.DEFAULT_K0S_FROM,
              EstateSpec.DEFAULT_TO, EstateSpec.DEFAULT_KUBEADM_TO, EstateSpec.DEFAULT_K0S_TO,
              String.join(", ", FAULT_STEPS.stream().map(UpgradeStep::cliName).toList()));

  public static DemoOptions parse(String... args) {
    Mode mode = Mode.CRS;
    int controlPlanes = 3;
    Integer pools = null;
    int workers = 3;
    String maxUnavailable = "1";
    OnFailure onFailure = OnFailure.HALT;
    Distribution distribution = Distribution.K3S;
    HostOs os = HostOs.STANDARD;
    HostServer hosts = HostServer.MINA;
    String from = null;
    String to = null;
    boolean json = false;
    boolean keep = false;
    long binaryMiB = 32;
    long drainTimeout = 20;
    long readyTimeout = 20;
    List<Fault> faults = new ArrayList<>();
    Topology topology = Topology.IN_PROCESS;
    int workerProcesses = 2;
    double restartSeconds = DEFAULT_RESTART_SECONDS;
    boolean clusterClass = false;
    TemporalServer temporal = TemporalServer.TEST_SERVER;
    String binDir = null;
    for (int i = 0; i < args.length; i++) {
      String arg = args[i];
      switch (arg) {
        case "--mode" -> mode = mode(value(args, ++i, arg));
        case "--distribution" -> distribution = distribution(value(args, ++i, arg));
        case "--os" -> os = HostOs.parse(value(args, ++i, arg));
        case "--control-planes" -> controlPlanes = intValue(arg, value(args, ++i, arg));
        case "--pools" -> pools = intValue(arg, value(args, ++i, arg));
        case "--workers" -> workers = intValue(arg, value(args, ++i, arg));
        case "--max-unavailable" -> maxUnavailable = maxUnavailable(value(args, ++i, arg));
        case "--on-failure" -> onFailure = onFailure(value(args, ++i, arg));
        case "--from" -> from = version(arg, value(args, ++i, arg));
        case "--to" -> to = version(arg, value(args, ++i, arg));
        case "--fail" -> faults.add(fault(value(args, ++i, arg)));
        case "--binary-size-mib" -> binaryMiB = intValue(arg, value(args, ++i, arg));
        case "--drain-timeout" -> drainTimeout = intValue(arg, value(args, ++i, arg));
        case "--ready-timeout" -> readyTimeout = intValue(arg, value(args, ++i, arg));
        case "--hosts" -> hosts = HostServer.parse(value(args, ++i, arg));
        case "--topology" -> topology = topology(value(args, ++i, arg));
        case "--worker-processes" -> workerProcesses = intValue(arg, value(args, ++i, arg));
        case "--temporal" -> temporal = TemporalServer.parse(value(args, ++i, arg));
        case "--restart-seconds" -> restartSeconds = seconds(arg, value(args, ++i, arg));
        case "--cluster-class" -> clusterClass = true;
        case "--bin-dir" -> binDir = binDir(value(args, ++i, arg));
        case "--json" -> json = true;
        case "--keep" -> keep = true;
        default -> throw new IllegalArgumentException("unknown option '" + arg + "'");
      }
    }
    // kubeadm's demo is the 3 control planes + 3 workers: one MachineDeployment by default.
    pools = pools == null ? (distribution == Distribution.KUBEADM ? 1 : 2) : pools;
    from = from == null ? EstateSpec.defaultFrom(distribution) : from;
    to = to == null ? EstateSpec.defaultTo(distribution) : to;
    if (!distribution.hasUpgradeCommand() && faults.stream().anyMatch(f -> f.step() == UpgradeStep.UPGRADE)) {
      throw new IllegalArgumentException("--fail NODE:upgrade needs --distribution kubeadm: "
          + distribution.name().toLowerCase() + " has no upgrade command");
    }
    if (os != HostOs.KAIROS && faults.stream().anyMatch(f -> f.kairosFault() != null)) {
      throw new IllegalArgumentException("--fail NODE:boot and NODE:return need --os kairos");
    }
    if (os == HostOs.KAIROS && distribution == Distribution.KUBEADM) {
      throw new IllegalArgumentException("--os kairos runs k3s or k0s (Kairos's providers), not kubeadm");
    }
    if (os == HostOs.KAIROS && mode == Mode.EXTENSION) {
      throw new IllegalArgumentException("--os kairos runs with --mode crs or workflows");
    }
    if (workerProcesses < 1 || workerProcesses > 9) {
      throw new IllegalArgumentException("--worker-processes must be 1..9, got " + workerProcesses);
    }
    if (temporal == TemporalServer.DEV_SERVER && topology != Topology.PROCESSES) {
      throw new IllegalArgumentException("--temporal dev-server needs --topology processes: the in-process demo"
          + " runs Temporal's test server inside its own JVM");
    }
    if (topology == Topology.PROCESSES && mode == Mode.EXTENSION) {
      throw new IllegalArgumentException("--mode extension runs in-process only; use --topology in-process");
    }
    if (clusterClass && mode == Mode.EXTENSION) {
      throw new IllegalArgumentException("--cluster-class shows the refusal of the crs and workflows modes; the"
          + " runtime extension is driven by CAPI from the topology: --kube real --distribution kubeadm --cluster-class"
          + " --mode extension runs it on real Cluster API (docs/capi-extension.md)");
    }
    if (binDir != null && (mode != Mode.CRS || topology != Topology.IN_PROCESS)) {
      throw new IllegalArgumentException("--bin-dir shows the custom resources' refusal: it runs with --mode crs"
          + " and --topology in-process");
    }
    if (binaryMiB < 1 || binaryMiB > 512) {
      throw new IllegalArgumentException("--binary-size-mib must be 1..512");
    }
    if (drainTimeout < 1 || readyTimeout < 1) {
      throw new IllegalArgumentException("--drain-timeout and --ready-timeout must be at least 1");
    }
    if (!(restartSeconds >= 0 && restartSeconds <= 600)) {
      throw new IllegalArgumentException("--restart-seconds must be 0..600, got " + restartSeconds);
    }
    if (KubeVersion.parse(to).compareTo(KubeVersion.parse(from)) <= 0) {
      throw new IllegalArgumentException("--to " + to + " must be newer than --from " + from);
    }
    DemoOptions options = new DemoOptions(mode, controlPlanes, pools, workers, maxUnavailable, onFailure, from, to, json, List.copyOf(faults), binaryMiB << 20, drainTimeout, readyTimeout, keep, distribution, hosts, topology, workerProcesses, restartSeconds, clusterClass, os, temporal, binDir);
    // Refused here, before anything starts: found only when the estate arms it, a mistyped node cost
    // the whole start-up of the estate (two minutes on the local stack) before the same message.
    List<String> nodes = options.estateSpec().nodeNames();
    for (Fault fault : faults) {
      if (!nodes.contains(fault.node())) {
        throw new IllegalArgumentException("--fail: no node '" + fault.node() + "' in this estate; nodes are " + nodes);
      }
    }
    return options;
  }

  /**
   * The estate's options among the demo's arguments: what the estate process of the local stack is
   * started with (it parses them as the demo does and ignores what is not about the estate).
   */
  public static List<String> estateArgs(List<String> demoArgs) {
    List<String> estate = new ArrayList<>();
    for (int i = 0; i < demoArgs.size(); i++) {
      String arg = demoArgs.get(i);
      switch (arg) {
        case "--topology", "--worker-processes", "--temporal" -> i++;
        case "--json", "--keep" -> { }
        default -> estate.add(arg);
      }
    }
    return estate;
  }

  /** An absolute path (the InplaceHostProfile schema's form); whether it is allowed is the worker's to say. */
  private static String binDir(String text) {
    if (!text.matches("/[A-Za-z0-9._+/@-]*")) {
      throw new IllegalArgumentException("--bin-dir needs an absolute path of [A-Za-z0-9._+/@-], got '" + text + "'");
    }
    return text;
  }

  private static Topology topology(String text) {
    return switch (text) {
      case "in-process" -> Topology.IN_PROCESS;
      case "processes" -> Topology.PROCESSES;
      default -> throw new IllegalArgumentException("--topology must be in-process or processes, got '" + text + "'");
    };
  }

  public EstateSpec estateSpec() {
    return new EstateSpec(
        controlPlanes, pools, workers, from, to,
        new FakeReleaseSizes(binaryBytes, FakeReleaseSizes.defaults().imagePaddingBytes()),
        Duration.ofMillis(Math.round(restartSeconds * 1000)), distribution, hosts, clusterClass, os);
  }

  private static String maxUnavailable(String text) {
    if (!text.matches("[1-9]\\d*%?") || (text.endsWith("%") && Integer.parseInt(text.replace("%", "")) > 100)) {
      throw new IllegalArgumentException("--max-unavailable needs a count >= 1 or a percent 1%..100%, got '" + text + "'");
    }
    return text;
  }

  private static Mode mode(String text) {
    for (Mode m : Mode.values()) {
      if (m.name().equalsIgnoreCase(text)) {
        return m;
      }
    }
    throw new IllegalArgumentException("--mode must be crs, workflows or extension, got '" + text + "'");
  }

  private static Distribution distribution(String text) {
    for (Distribution d : Distribution.values()) {
      if (d.name().equalsIgnoreCase(text)) {
        return d;
      }
    }
    throw new IllegalArgumentException("--distribution must be k3s, kubeadm or k0s, got '" + text + "'");
  }

  private static OnFailure onFailure(String text) {
    for (OnFailure f : OnFailure.values()) {
      if (f.name().equalsIgnoreCase(text)) {
        return f;
      }
    }
    throw new IllegalArgumentException("--on-failure must be halt, skip or retry, got '" + text + "'");
  }

  private static String value(String[] args, int i, String flag) {
    if (i >= args.length || args[i].startsWith("--")) {
      throw new IllegalArgumentException(flag + " needs a value");
    }
    return args[i];
  }

  private static int intValue(String flag, String text) {
    try {
      return Integer.parseInt(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a whole number, got '" + text + "'");
    }
  }

  private static double seconds(String flag, String text) {
    try {
      return Double.parseDouble(text);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(flag + " needs a number of seconds, got '" + text + "'");
    }
  }

  private static String version(String flag, String text) {
    try {
      KubeVersion.parse(text);
      return text;
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(flag + ": " + e.getMessage());
    }
  }

  private static Fault fault(String text) {
    int colon = text.indexOf(':');
    if (colon <= 0 || colon == text.length() - 1) {
      throw new IllegalArgumentException("--fail needs NODE:STEP, e.g. worker-1:restart; got '" + text + "'");
    }
    String what = text.substring(colon + 1);
    if (FaultInjector.KAIROS_FAULTS.contains(what)) {
      return new Fault(text.substring(0, colon), UpgradeStep.RESTART, what);
    }
    UpgradeStep step;
    try {
      step = UpgradeStep.fromCliName(text.substring(colon + 1));
    } catch (IllegalArgumentException e) {
      step = null;
    }
    if (step == null || !FAULT_STEPS.contains(step)) {
      throw new IllegalArgumentException(
          "--fail: cannot inject a failure at '" + text.substring(colon + 1) + "'; steps: "
              + String.join(", ", FAULT_STEPS.stream().map(UpgradeStep::cliName).toList()));
    }
    return new Fault(text.substring(0, colon), step);
  }
}
