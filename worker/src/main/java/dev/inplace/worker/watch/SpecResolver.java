package dev.inplace.worker.watch;

import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.DrainSpec;
import dev.inplace.worker.crd.HostProfileSpec;
import dev.inplace.worker.crd.MaintenanceWindowSpec;
import dev.inplace.worker.crd.SshSpec;
import dev.inplace.worker.crd.UpgradeSpec;
import dev.inplace.worker.crd.WorkersUpgradeSpec;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterInventory.PoolInfo;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.DrainOptions;
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaintenanceWindow;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.PdbBlockedAction;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.VersionSkew;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.worker.intake.IntakeRefusal;
import dev.inplace.worker.intake.IntakeUnavailable;
import dev.inplace.worker.intake.RunIntake;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.temporal.failure.ApplicationFailure;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Checks a CR and resolves it into the inputs of its run(s), reading only: the spec itself, then
 * the Cluster and its Machines, the SSH and kubeconfig Secrets (that they and their keys exist,
 * never their contents), and the release catalogue, the last two through the shared {@link RunIntake}.
 * The first problem found refuses the CR with its failure type as the reason.
 */
final class SpecResolver {
  private static final Pattern NAME = Pattern.compile(UpgradeSpec.NAME_PATTERN);
  private static final Pattern VERSION = Pattern.compile(UpgradeSpec.VERSION_PATTERN);
  private static final Pattern ARCH = Pattern.compile("[a-z0-9_]+");
  // The same forms the WorkersUpgrade workflow accepts: a count >= 1 or 1%..100%.
  private static final Pattern COUNT = Pattern.compile("[1-9][0-9]{0,5}");
  private static final Pattern PERCENT = Pattern.compile("([1-9][0-9]?|100)%");

  private final RunIntake intake;
  private final ClusterApiActivities clusters;

  SpecResolver(RunIntake intake, ClusterApiActivities clusters) {
    this.intake = intake;
    this.clusters = clusters;
  }

  ResolvedUpgrade resolve(String namespace, UpgradeSpec<?> spec) throws SpecRefusal {
    try {
      return resolveChecked(namespace, spec);
    } catch (IntakeRefusal e) {
      throw new SpecRefusal(e.type(), e.getMessage());
    } catch (IntakeUnavailable e) {
      throw new TransientProblem(e.getMessage(), e);
    }
  }

  private ResolvedUpgrade resolveChecked(String namespace, UpgradeSpec<?> spec) throws SpecRefusal, IntakeRefusal {
    checkFields(spec);
    String target = spec.getVersion();
    ClusterRef cluster = new ClusterRef(namespace, spec.getClusterName());
    ClusterInventory inventory = inventory(cluster);
    intake.refuseTopologyCluster(cluster);
    List<MachineInfo> controlPlanes = role(inventory, NodeRole.CONTROL_PLANE);
    WorkersUpgradeSpec workers = spec instanceof WorkersUpgradeSpec w ? w : null;
    List<String> pools = List.of();
    List<MachineInfo> machines;
    if (workers != null) {
      pools = pools(inventory, workers);
      List<String> chosen = pools;
      machines = role(inventory, NodeRole.WORKER).stream().filter(m -> chosen.contains(m.pool())).toList();
    } else {
      if (controlPlanes.isEmpty()) {
        throw invalid("cluster " + cluster + " has no control-plane Machines");
      }
      machines = controlPlanes;
    }
    RunIntake.checkSkew(machines, target);

    SshSettings ssh = ssh(spec.getSsh());
    intake.requireRunSecrets(cluster, ssh);
    Distribution distribution = distribution(spec);
    String arch = arch(spec);
    CatalogueReference ref = spec.getReleaseCatalogue();
    ReleaseCatalogue.Release release =
        intake.release(namespace, ref.getConfigMapName(), ref.key(), target, distribution, arch, os(spec.getHostProfile()));
    NodeUpgradeTemplate template;
    try {
      template =
          new NodeUpgradeTemplate(
              distribution,
              target,
              release.artifacts(),
              profile(spec.getHostProfile(), distribution),
              ssh,
              singleNode(drain(spec.getDrain()), inventory),
              orDefault(spec.getReadyTimeoutSeconds(), UpgradeSpec.DEFAULT_READY_TIMEOUT_SECONDS),
              orDefault(spec.getMinFreeBytes(), 0L),
              arch);
    } catch (IllegalArgumentException e) {
      throw invalid(e.getMessage());
    }
    checkMachines(cluster, template, machines);
    MaintenanceWindow window = window(spec.getMaintenanceWindow());
    long soak = orDefault(spec.getSoakSeconds(), 0L);
    boolean controlPlaneAtTarget = !controlPlanes.isEmpty() && controlPlanes.stream().allMatch(m -> runs(m, target));
    if (workers == null) {
      return new ResolvedUpgrade(
          cluster, inventory, template, window, soak, List.of(), "1", FailurePolicy.HALT, 0, controlPlaneAtTarget);
    }
    FailurePolicy policy =
        workers.getFailurePolicy() == null || workers.getFailurePolicy().getType() == null
            ? FailurePolicy.HALT
            : workers.getFailurePolicy().getType().policy();
    int maxFailures =
        workers.getFailurePolicy() == null || workers.getFailurePolicy().getMaxFailures() == null
            ? 0
            : workers.getFailurePolicy().getMaxFailures();
    return new ResolvedUpgrade(
        cluster, inventory, template, window, soak, pools, maxUnavailable(workers), policy, maxFailures,
        controlPlaneAtTarget);
  }

  // ---- the spec alone ---------------------------------------------------------------------------

  private void checkFields(UpgradeSpec<?> spec) throws SpecRefusal {
    if (spec == null) {
      throw invalid("spec is required");
    }
    if (spec.getClusterName() == null || !NAME.matcher(spec.getClusterName()).matches()) {
      throw invalid("spec.clusterName must name a Cluster (a lower-case DNS name), got '" + spec.getClusterName() + "'");
    }
    if (spec.getVersion() == null
        || !VERSION.matcher(spec.getVersion()).matches()
        || !KubeVersion.isValid(spec.getVersion())) {
      throw invalid("spec.version must be a Kubernetes version like v1.31.2+k3s1, got '" + spec.getVersion() + "'");
    }
    if (spec.getReleaseCatalogue() == null || spec.getReleaseCatalogue().getConfigMapName() == null) {
      throw invalid("spec.releaseCatalogue.configMapName is required");
    }
    if (spec.getSsh() == null) {
      throw invalid("spec.ssh is required (privateKeySecret and knownHostsSecret)");
    }
    requireAtLeast("spec.soakSeconds", spec.getSoakSeconds(), 0);
    requireAtLeast("spec.readyTimeoutSeconds", spec.getReadyTimeoutSeconds(), 1);
    requireAtLeast("spec.minFreeBytes", spec.getMinFreeBytes(), 0);
    if (spec instanceof WorkersUpgradeSpec workers) {
      maxUnavailable(workers);
      if (workers.getFailurePolicy() != null && workers.getFailurePolicy().getMaxFailures() != null
          && workers.getFailurePolicy().getMaxFailures() < 0) {
        throw invalid("spec.failurePolicy.maxFailures must be >= 0");
      }
      Set<String> seen = new LinkedHashSet<>();
      for (String md : workers.getMachineDeployments() == null ? List.<String>of() : workers.getMachineDeployments()) {
        if (md == null || !NAME.matcher(md).matches() || !seen.add(md)) {
          throw invalid("spec.machineDeployments must be distinct MachineDeployment names, got " + workers.getMachineDeployments());
        }
      }
    }
  }

  private static void requireAtLeast(String field, Long value, long min) throws SpecRefusal {
    if (value != null && value < min) {
      throw invalid(field + " must be >= " + min + ", got " + value);
    }
  }

  /** The window as the workflow takes it: {@code "3"} or {@code "25%"}; default 1. */
  static String maxUnavailable(WorkersUpgradeSpec spec) throws SpecRefusal {
    IntOrString value = spec.getMaxUnavailable();
    if (value == null || (value.getIntVal() == null && value.getStrVal() == null)) {
      return "1";
    }
    String text = value.getIntVal() != null ? Integer.toString(value.getIntVal()) : value.getStrVal().trim();
    if (!COUNT.matcher(text).matches() && !PERCENT.matcher(text).matches()) {
      throw invalid("spec.maxUnavailable must be a count of at least 1 (3) or a percent from 1% to 100% (25%), got '"
          + text + "'");
    }
    return text;
  }

  private static SshSettings ssh(SshSpec spec) throws SpecRefusal {
    try {
      return new SshSettings(
          spec.getUser() == null ? "root" : spec.getUser(),
          spec.getPort() == null ? 22 : spec.getPort(),
          spec.getPrivateKeySecret(),
          spec.getKnownHostsSecret(),
          spec.getJumpHost());
    } catch (IllegalArgumentException e) {
      throw invalid("spec.ssh: " + e.getMessage());
    }
  }

  /** {@code spec.hostProfile.os}: standard unless it says kairos. */
  private static HostOs os(HostProfileSpec spec) throws SpecRefusal {
    try {
      return spec == null ? HostOs.STANDARD : HostOs.parse(spec.getOs());
    } catch (IllegalArgumentException e) {
      throw invalid("spec.hostProfile." + e.getMessage());
    }
  }

  /** The distribution's standard layout (k3s or kubeadm), with the spec's overrides. */
  private static HostProfile profile(HostProfileSpec spec, Distribution distribution) throws SpecRefusal {
    HostProfile d = distribution.defaultProfile().withOs(os(spec));
    if (spec == null) {
      return d;
    }
    return new HostProfile(
        orDefault(spec.getBinDir(), d.binDir()),
        orDefault(spec.getImagesDir(), d.imagesDir()),
        orDefault(spec.getStagingDir(), d.stagingDir()),
        orDefault(spec.getBackupDir(), d.backupDir()),
        orDefault(spec.getServerService(), d.serverService()),
        orDefault(spec.getAgentService(), d.agentService()),
        d.os());
  }

  /** A one-node cluster skips the drain: there is nowhere to evict to (the CR's DrainSkipped condition says so). */
  private static DrainOptions singleNode(DrainOptions drain, ClusterInventory inventory) {
    if (drain.skip() || inventory.machines().size() != 1) {
      return drain;
    }
    return new DrainOptions(drain.timeoutSeconds(), drain.deleteEmptyDirData(), drain.force(), drain.onBlocked(), true);
  }

  private static DrainOptions drain(DrainSpec spec) {
    DrainOptions d = DrainOptions.defaults();
    if (spec == null) {
      return d;
    }
    return new DrainOptions(
        orDefault(spec.getTimeoutSeconds(), d.timeoutSeconds()),
        orDefault(spec.getDeleteEmptyDirData(), d.deleteEmptyDirData()),
        orDefault(spec.getForce(), d.force()),
        spec.getOnPdbBlocked() == null ? PdbBlockedAction.FAIL : spec.getOnPdbBlocked().action(),
        orDefault(spec.getSkip(), d.skip()));
  }

  private static MaintenanceWindow window(MaintenanceWindowSpec spec) throws SpecRefusal {
    if (spec == null) {
      return null;
    }
    try {
      return new MaintenanceWindow(spec.getDays(), spec.getStart(), spec.getEnd(), spec.getTimeZone());
    } catch (IllegalArgumentException | NullPointerException e) {
      throw invalid("spec.maintenanceWindow: " + (e.getMessage() == null ? "start and end are required" : e.getMessage()));
    }
  }

  private static Distribution distribution(UpgradeSpec<?> spec) {
    return spec.getDistribution() == null ? Distribution.K3S : spec.getDistribution();
  }

  private static String arch(UpgradeSpec<?> spec) throws SpecRefusal {
    String arch = spec.getArch() == null ? "amd64" : spec.getArch();
    if (!ARCH.matcher(arch).matches()) {
      throw invalid("spec.arch must be a name like amd64 or arm64, got '" + arch + "'");
    }
    return arch;
  }

  // ---- what the spec refers to ------------------------------------------------------------------

  private ClusterInventory inventory(ClusterRef cluster) throws SpecRefusal {
    try {
      return clusters.describeCluster(cluster);
    } catch (ApplicationFailure e) {
      if (UpgradeFailures.KUBERNETES_API_ERROR.equals(e.getType())) {
        throw new TransientProblem("cannot read cluster " + cluster + ": " + e.getOriginalMessage(), e);
      }
      throw new SpecRefusal(e.getType(), e.getOriginalMessage());
    }
  }

  private static List<String> pools(ClusterInventory inventory, WorkersUpgradeSpec spec) throws SpecRefusal {
    List<String> known = inventory.pools().stream().map(PoolInfo::machineDeployment).toList();
    List<String> wanted = spec.getMachineDeployments();
    if (wanted == null || wanted.isEmpty()) {
      if (known.isEmpty()) {
        throw invalid("cluster " + inventory.cluster() + " has no MachineDeployments");
      }
      return known;
    }
    List<String> unknown = new ArrayList<>(wanted);
    unknown.removeAll(known);
    if (!unknown.isEmpty()) {
      throw invalid("MachineDeployment(s) " + String.join(", ", unknown) + " not found in cluster " + inventory.cluster()
          + "; it has: " + (known.isEmpty() ? "none" : String.join(", ", known)));
    }
    return List.copyOf(wanted);
  }

  /** Every Machine must make a valid node target (an address, a node name). */
  private static void checkMachines(ClusterRef cluster, NodeUpgradeTemplate template, List<MachineInfo> machines)
      throws SpecRefusal {
    for (MachineInfo m : machines) {
      try {
        template.forNode(m.target(cluster));
      } catch (IllegalArgumentException e) {
        throw invalid("Machine " + m.name() + ": " + e.getMessage());
      }
    }
  }

  static Optional<KubeVersion> current(MachineInfo m) {
    return VersionSkew.currentVersion(m);
  }

  /**
   * Whether a Machine runs {@code target} (kubelet, else Machine version), as the parents judge it
   * ({@link VersionSkew#runs}): a k0s Node reporting {@code v1.31.2+k0s} runs {@code v1.31.2+k0s.1},
   * so a WorkersUpgrade to a {@code +k0s.N} release does not wait forever for its control plane.
   */
  static boolean runs(MachineInfo m, String target) {
    return VersionSkew.runs(m, target);
  }

  static List<MachineInfo> role(ClusterInventory inventory, NodeRole role) {
    return inventory.machines().stream().filter(m -> m.role() == role).toList();
  }

  private static SpecRefusal invalid(String message) {
    return new SpecRefusal(UpgradeFailures.INVALID_REQUEST, message);
  }

  private static <T> T orDefault(T value, T fallback) {
    return value == null ? fallback : value;
  }
}
