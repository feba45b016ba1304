package dev.inplace.worker.watch;

import dev.inplace.worker.crd.CatalogueReference;
import dev.inplace.worker.crd.DrainSpec;
import dev.inplace.worker.crd.FailurePolicyType;
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
import dev.inplace.workflows.api.FailurePolicy;
import dev.inplace.workflows.api.KubeVersion;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.MaxUnavailable;
import dev.inplace.workflows.api.NodeRole;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.VersionSkew;
import dev.inplace.workflows.failure.UpgradeFailures;
import dev.inplace.worker.intake.IntakeRefusal;
import dev.inplace.worker.intake.IntakeRequest;
import dev.inplace.worker.intake.IntakeUnavailable;
import dev.inplace.worker.intake.RunInputs;
import dev.inplace.worker.intake.RunIntake;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.temporal.failure.ApplicationFailure;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The custom resources' door to the one intake: checks a CR's own fields (what the CRD schema
 * says, again, for servers that do not validate), reads the Cluster and its Machines, picks the
 * Machines the run covers, and hands the rest to {@link RunIntake#admit} as an {@link
 * IntakeRequest} (settings, Secrets, version skew, catalogue). The first problem found refuses the
 * CR with its failure type as the reason.
 */
final class SpecResolver {
  private static final Pattern NAME = Pattern.compile(UpgradeSpec.NAME_PATTERN);
  private static final Pattern VERSION = Pattern.compile(UpgradeSpec.VERSION_PATTERN);
  // The same forms the WorkersUpgrade workflow accepts: a count >= 1 or 1%..100%.

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
    RunInputs inputs = intake.admit(ask(cluster, spec, machines, inventory.machines().size() == 1));
    long soak = orDefault(spec.getSoakSeconds(), 0L);
    boolean controlPlaneAtTarget = !controlPlanes.isEmpty() && controlPlanes.stream().allMatch(m -> runs(m, target));
    if (workers == null) {
      return new ResolvedUpgrade(cluster, inventory, inputs.template(), inputs.window(), soak, List.of(), "1",
          FailurePolicy.HALT, 0, controlPlaneAtTarget);
    }
    FailurePolicy policy =
        workers.getFailurePolicy() == null || workers.getFailurePolicy().getType() == null
            ? FailurePolicy.HALT
            : workers.getFailurePolicy().getType().policy();
    int maxFailures =
        workers.getFailurePolicy() == null || workers.getFailurePolicy().getMaxFailures() == null
            ? 0
            : workers.getFailurePolicy().getMaxFailures();
    return new ResolvedUpgrade(cluster, inventory, inputs.template(), inputs.window(), soak, pools,
        maxUnavailable(workers), policy, maxFailures, controlPlaneAtTarget);
  }

  /**
   * The spec as the intake takes it: every field as written (null when unset, so the intake applies
   * the one default), the distribution defaulting to k3s as the CRD does, fields named {@code spec.*}.
   */
  static IntakeRequest ask(ClusterRef cluster, UpgradeSpec<?> spec, List<MachineInfo> machines, boolean singleNode) {
    HostProfileSpec h = spec.getHostProfile();
    SshSpec s = spec.getSsh();
    DrainSpec d = spec.getDrain();
    MaintenanceWindowSpec w = spec.getMaintenanceWindow();
    CatalogueReference c = spec.getReleaseCatalogue();
    return new IntakeRequest(
        cluster,
        spec.getVersion(),
        spec.getDistribution() == null ? Distribution.K3S : spec.getDistribution(),
        spec.getArch(),
        h == null ? null : new IntakeRequest.Host(h.getOs(), h.getName()),
        new IntakeRequest.Ssh(s.getUser(), s.getPort(), s.getPrivateKeySecret(), s.getKnownHostsSecret(), s.getJumpHost()),
        d == null ? null : new IntakeRequest.Drain(d.getTimeoutSeconds(), d.getDeleteEmptyDirData(), d.getForce(),
            d.getOnPdbBlocked() == null ? null : d.getOnPdbBlocked().action(), d.getSkip()),
        spec.getReadyTimeoutSeconds(),
        spec.getMinFreeBytes(),
        w == null ? null : new IntakeRequest.Window(w.getDays(), w.getStart(), w.getEnd(), w.getTimeZone()),
        new IntakeRequest.Catalogue(c.getConfigMapName(), c.getKey()),
        machines,
        singleNode,
        IntakeRequest.Recording.CLUSTER_OBJECTS,
        field -> "spec." + field);
  }

  // ---- the spec alone ---------------------------------------------------------------------------

  /**
   * Host paths are not free text in a resource (issue 34, docs/security.md): a spec that still sets
   * the layout fields an older schema had is refused, naming the first and the fix.
   */
  private static void refuseLayoutFields(HostProfileSpec host) throws SpecRefusal {
    if (host == null || host.refusedLayoutFields().isEmpty()) {
      return;
    }
    Map.Entry<String, String> first = host.refusedLayoutFields().entrySet().iterator().next();
    throw invalid("spec.hostProfile." + first.getKey() + " (" + first.getValue() + ") is no longer accepted: host"
        + " paths are not set in an upgrade resource; an administrator creates an InplaceHostProfile with them and"
        + " the resource names it in spec.hostProfile.name (docs/crd-reference.md)");
  }

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
    refuseLayoutFields(spec.getHostProfile());
    Optional<String> jumpHost = SshSettings.jumpHostProblem(spec.getSsh().getJumpHost());
    if (jumpHost.isPresent()) {
      throw invalid("spec.ssh: " + jumpHost.get()); // as the intake words it for the hook's setting
    }
    // The schema's minimums (@Min), refused before the Cluster is read; the intake checks the last two
    // again for the hook's settings.
    requireAtLeast("spec.soakSeconds", spec.getSoakSeconds(), 0);
    requireAtLeast("spec.readyTimeoutSeconds", spec.getReadyTimeoutSeconds(), 1);
    requireAtLeast("spec.minFreeBytes", spec.getMinFreeBytes(), 0);
    if (spec instanceof WorkersUpgradeSpec workers) {
      maxUnavailable(workers);
      if (workers.getFailurePolicy() != null && workers.getFailurePolicy().getMaxFailures() != null
          && workers.getFailurePolicy().getMaxFailures() < 0) {
        throw invalid("spec.failurePolicy.maxFailures must be >= 0");
      }
      if (workers.getFailurePolicy() != null && workers.getFailurePolicy().getMaxFailures() != null
          && workers.getFailurePolicy().getMaxFailures() > 0 && workers.getFailurePolicy().getType() != FailurePolicyType.CONTINUE) {
        throw invalid("spec.failurePolicy.maxFailures applies only to type Continue, got "
            + workers.getFailurePolicy().getMaxFailures() + " with Halt (the first failed node halts the run)");
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
    try {
      MaxUnavailable.parse(text); // the rule the run applies, as the CLI checks it
    } catch (IllegalArgumentException e) {
      throw invalid("spec." + e.getMessage());
    }
    return text;
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
