package dev.inplace.workflows.api;

import io.temporal.activity.ActivityInterface;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.temporal.activity.ActivityMethod;
import io.temporal.failure.ApplicationFailure;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;

/** Reads and patches CAPI objects (v1beta2) in the management cluster. */
@ActivityInterface
public interface ClusterApiActivities {

  /** Annotation telling MachineHealthChecks to leave a Machine alone while it is upgraded. */
  String SKIP_REMEDIATION_ANNOTATION = "cluster.x-k8s.io/skip-remediation";
  /** Annotation that pauses CAPI's controllers for one object. */
  String PAUSED_ANNOTATION = "cluster.x-k8s.io/paused";
  /** Records which run paused an object, so only that run unpauses it. */
  String PAUSED_BY_ANNOTATION = "upgrade.inplace.dev/paused-by";
  /**
   * On a Machine, written by the UpdateMachine hook when it starts a run: the SSH settings and host
   * profile its settings gave the Machine (JSON), so the host activities can confirm a run's input
   * against what a door configured rather than believe the input ({@link #confirmHostAccess}).
   */
  String HOST_ACCESS_ANNOTATION = "upgrade.inplace.dev/update-access";

  /**
   * Read-only, the first step of a NodeUpgrade run (from change {@code
   * node-upgrade-confirms-host-access} on), before anything is marked or any Secret is read: the
   * run's host as the management cluster gives it. The Machine must exist in the cluster's
   * namespace ({@code MachineNotFound}), belong to the Cluster, which must exist ({@code
   * ClusterNotFound}), have the run's Node and the run's address among its addresses; the SSH
   * Secrets, jump host and host layout must be ones the cluster's resources configure. Anything
   * else is {@code HostAccessMismatch}, naming what differs. The host activities apply the same
   * check again before they connect.
   */
  @ActivityMethod
  void confirmHostAccess(HostAccessCheck request);

  /** What a run asks to touch: a host, through its SSH settings, with a layout. */
  record HostAccessCheck(HostAccess host, Distribution distribution, HostProfile profile) {}

  /**
   * Read-only: the Cluster's control-plane object and version, its Machines (role, Node, InternalIP
   * address, versions, pool) and its MachineDeployments with their newest MachineSet. Fails with
   * {@code InvalidRequest} naming what is missing (no Cluster, a Machine without a Node yet), and
   * with {@code TopologyManagedCluster} for a ClusterClass cluster ({@code spec.topology}), which
   * inplace does not upgrade: the parents read the cluster first, so a run started by hand is
   * refused before anything changes.
   */
  @ActivityMethod
  ClusterInventory describeCluster(ClusterRef cluster);

  /**
   * Adds (or removes) {@link #SKIP_REMEDIATION_ANNOTATION} on a Machine; idempotent. With an {@code
   * owner}, the mark's value is the owner, an existing mark of anyone else (an operator's) is left
   * alone, and removing takes away only the owner's own mark. Without one (runs from before owners),
   * the value is empty and removing removes any mark.
   */
  @ActivityMethod
  MachineMarkResult markMachineUpgrading(MachineMarkRequest request);

  /**
   * {@link #markMachineUpgrading} for several Machines at once, in order: one local activity for
   * every mark and unmark a parent run's nodes ask for together (at most {@link
   * #MAX_MARKS_PER_BATCH}). A Machine whose mark fails for good (not found) gets its failure in its
   * outcome and the others go on; a failure worth retrying fails the whole batch, and the retry
   * repeats it (each mark is idempotent). {@link #markEach} is the one way to implement it.
   */
  @ActivityMethod
  MachineMarksResult markMachines(MachineMarksRequest request);

  /** The most marks one {@link #markMachines} call carries, so a batch stays well within its timeout. */
  int MAX_MARKS_PER_BATCH = 50;

  /**
   * {@link #markMachines}'s semantics over a single-Machine mark: each in order; a non-retryable
   * {@link ApplicationFailure} becomes that Machine's outcome, anything else propagates.
   */
  static MachineMarksResult markEach(MachineMarksRequest request, Function<MachineMarkRequest, MachineMarkResult> mark) {
    if (request == null || request.marks() == null || request.marks().size() > MAX_MARKS_PER_BATCH) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, "a batch carries 0.." + MAX_MARKS_PER_BATCH + " marks");
    }
    List<MachineMarkOutcome> outcomes = new ArrayList<>();
    for (MachineMarkRequest one : request.marks()) {
      try {
        outcomes.add(new MachineMarkOutcome(one.machineName(), mark.apply(one).changed(), null, null));
      } catch (ApplicationFailure e) {
        if (!e.isNonRetryable()) {
          throw e;
        }
        outcomes.add(new MachineMarkOutcome(one.machineName(), false, e.getType(), e.getOriginalMessage()));
      }
    }
    return new MachineMarksResult(outcomes);
  }

  /**
   * Pauses the control-plane object for a ControlPlaneUpgrade run (records {@code owner} in {@link
   * #PAUSED_BY_ANNOTATION}); {@link #recordControlPlaneVersion} with the same owner unpauses it at
   * the end. Idempotent; an object someone else paused is left as it is. {@code version} is unused.
   */
  @ActivityMethod
  BookkeepingResult pauseControlPlane(ControlPlaneVersionRequest request);

  /**
   * Removes the pause {@link #pauseControlPlane} set for {@code owner}, and nothing else: for a run
   * that ends with no node changed (aborted, cancelled, or every node skipped). A pause held by
   * someone else, or none, is left as it is. Idempotent. {@code version} is unused.
   */
  @ActivityMethod
  BookkeepingResult releaseControlPlane(ControlPlaneVersionRequest request);

  /**
   * Sets the control-plane object's {@code spec.version}, under {@link #PAUSED_ANNOTATION} (set
   * before the patch, removed after, only if this run set it). Idempotent. Returns the patches done,
   * in order.
   */
  @ActivityMethod
  BookkeepingResult recordControlPlaneVersion(ControlPlaneVersionRequest request);

  /**
   * Pauses the MachineDeployment, sets {@code spec.template.spec.version} on its newest MachineSet
   * then on the MachineDeployment, and unpauses it, so no controller sees a template difference and
   * starts a replacement rollout. Idempotent. Returns the patches done, in order.
   */
  @ActivityMethod
  BookkeepingResult recordWorkerPoolVersion(PoolVersionRequest request);

  /** @param owner the run that marks (its workflow ID); null for runs from before owners */
  record MachineMarkRequest(String namespace, String machineName, boolean upgrading, String owner) {
    public MachineMarkRequest(String namespace, String machineName, boolean upgrading) {
      this(namespace, machineName, upgrading, null);
    }
  }

  record MachineMarkResult(boolean changed) {}

  record MachineMarksRequest(List<MachineMarkRequest> marks) {}

  /** One outcome per mark, in the request's order. */
  record MachineMarksResult(List<MachineMarkOutcome> outcomes) {}

  /** @param failureType the vocabulary type of a mark that failed for good; null when it was set (or already so) */
  record MachineMarkOutcome(String machineName, boolean changed, String failureType, String failureMessage) {}

  record ControlPlaneVersionRequest(String namespace, ObjectRef controlPlane, String version, String owner) {}

  record PoolVersionRequest(String namespace, String machineDeployment, String version, String owner) {}

  /** @param patches human-readable patches in the order they were applied; empty when nothing changed */
  record BookkeepingResult(List<String> patches) {}

  /** Sets {@code Machine.spec.version}; a no-op when it already has that value. */
  @ActivityMethod
  MachineVersionResult recordMachineVersion(MachineVersionRequest request);

  record MachineVersionRequest(String namespace, String machineName, String version) {}

  /** kubeadm's ClusterConfiguration JSON on control-plane Machines (v1beta1 KCP, still read). */
  String KUBEADM_CLUSTER_CONFIGURATION_ANNOTATION = "controlplane.cluster.x-k8s.io/kubeadm-cluster-configuration";
  /** On an InfraMachine: the template it was cloned from. */
  String CLONED_FROM_NAME_ANNOTATION = "cluster.x-k8s.io/cloned-from-name";
  /** On an InfraMachine: {@code Kind.group} of the template it was cloned from. */
  String CLONED_FROM_GROUPKIND_ANNOTATION = "cluster.x-k8s.io/cloned-from-groupkind";

  /**
   * Records a node's upgrade on its Machine and whatever the distribution's control plane compares
   * to decide a Machine is up to date (capi-contracts.md s.3.3, s.5.3). Every distribution: {@code
   * Machine.spec.version}. kubeadm control planes, before it: the KubeadmConfig spec set to the
   * KubeadmControlPlane's {@code kubeadmConfigSpec} (init/join configuration kept as the Machine had
   * it), the InfraMachine's cloned-from annotations set to the KubeadmControlPlane's machine
   * template, then the Machine's cluster-configuration annotation with its version in one patch, so
   * a Machine at the version has everything else recorded too. Idempotent; returns the patches in
   * order.
   */
  @ActivityMethod
  MachineRecordResult recordMachineUpgrade(MachineRecordRequest request);

  record MachineRecordRequest(
      String namespace, String machineName, String version, Distribution distribution, NodeRole role) {}

  /** @param patches the patches done, in order; empty when everything already recorded the version */
  record MachineRecordResult(String previousVersion, java.util.List<String> patches) {}

  record MachineVersionResult(String previousVersion, boolean changed) {}
}
