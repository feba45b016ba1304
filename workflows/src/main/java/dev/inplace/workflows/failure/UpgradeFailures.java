package dev.inplace.workflows.failure;

import io.temporal.failure.ApplicationFailure;
import java.util.List;

/**
 * The one failure vocabulary. Each constant is an {@link ApplicationFailure} type thrown by
 * activities and workflows, and doubles as the reason of a custom resource condition. Activities
 * translate library exceptions into these at their boundary; workflows branch on them.
 */
public final class UpgradeFailures {
  // Refusals before anything changes (never retried).
  public static final String INVALID_REQUEST = "InvalidRequest";
  public static final String PREFLIGHT_FAILED = "PreflightFailed";
  public static final String UNSUPPORTED_VERSION_SKEW = "UnsupportedVersionSkew";
  public static final String NODE_NOT_READY = "NodeNotReady";
  public static final String NODE_NOT_FOUND = "NodeNotFound";
  public static final String MACHINE_NOT_FOUND = "MachineNotFound";
  public static final String CLUSTER_NOT_FOUND = "ClusterNotFound";
  public static final String SECRET_NOT_FOUND = "SecretNotFound";
  /**
   * A run's input names a host address, SSH Secret, jump host or host layout that the management
   * cluster does not give its Machine (issue 34, H4): a workflow input is not authority over which
   * host or Secret a step touches.
   */
  public static final String HOST_ACCESS_MISMATCH = "HostAccessMismatch";
  public static final String HOST_KEY_MISMATCH = "HostKeyMismatch";
  public static final String SSH_AUTH_FAILED = "SshAuthFailed";
  /** The host offers no SSH algorithm of the modern set the worker accepts (legacy-only server). */
  public static final String SSH_ALGORITHMS_UNSUPPORTED = "SshAlgorithmsUnsupported";
  public static final String INSUFFICIENT_DISK = "InsufficientDisk";
  public static final String ARCHITECTURE_MISMATCH = "ArchitectureMismatch";
  public static final String ARTIFACT_DIGEST_MISMATCH = "ArtifactDigestMismatch";
  public static final String ARTIFACT_UNAVAILABLE = "ArtifactUnavailable";
  /**
   * The Cluster has {@code spec.topology} (ClusterClass): CAPI's topology controller owns the
   * control-plane and MachineDeployment versions, so inplace refuses rather than fight it.
   */
  public static final String TOPOLOGY_MANAGED_CLUSTER = "TopologyManagedCluster";

  // Step failures (the node is rolled back).
  public static final String DRAIN_BLOCKED = "DrainBlocked";
  public static final String BACKUP_FAILED = "BackupFailed";
  public static final String INSTALL_FAILED = "InstallFailed";
  public static final String SERVICE_RESTART_FAILED = "ServiceRestartFailed";
  public static final String VERIFY_TIMEOUT = "VerifyTimeout";
  public static final String REMOTE_COMMAND_FAILED = "RemoteCommandFailed";
  public static final String ROLLBACK_FAILED = "RollbackFailed";
  public static final String ETCD_SNAPSHOT_FAILED = "EtcdSnapshotFailed";
  /** {@code kubeadm upgrade apply|node} failed; kubeadm rolls back a static pod that does not come up. */
  public static final String KUBEADM_UPGRADE_FAILED = "KubeadmUpgradeFailed";
  /** A Kairos host came up in another boot entry than the one planned (boot assessment fell back). */
  public static final String OS_IMAGE_DID_NOT_BOOT = "OsImageDidNotBoot";
  /** A host rebooted by the upgrade did not answer SSH again (with its pinned key) in time. */
  public static final String HOST_DID_NOT_RETURN = "HostDidNotReturn";
  /** The control plane did not become healthy (Ready at version, /readyz, etcd voters) in time. */
  public static final String CONTROL_PLANE_UNHEALTHY = "ControlPlaneUnhealthy";
  /** A parent run found a node failed and stopped starting new ones (failure policy Halt). */
  public static final String NODE_UPGRADE_FAILED = "NodeUpgradeFailed";
  /** An activity exceeded its timeout or stopped heartbeating (worker or host gone). */
  public static final String STEP_TIMED_OUT = "StepTimedOut";
  /** The run was cancelled (custom resource deleted, operator abort); the node was put back. */
  public static final String CANCELLED = "Cancelled";

  // Transient (retried by the activity retry policy).
  public static final String HOST_UNREACHABLE = "HostUnreachable";
  public static final String KUBERNETES_API_ERROR = "KubernetesApiError";

  /** Failure types no retry can fix: activity retry policies stop at once on these. */
  public static final List<String> NON_RETRYABLE =
      List.of(
          INVALID_REQUEST,
          PREFLIGHT_FAILED,
          UNSUPPORTED_VERSION_SKEW,
          NODE_NOT_FOUND,
          MACHINE_NOT_FOUND,
          CLUSTER_NOT_FOUND,
          TOPOLOGY_MANAGED_CLUSTER,
          SECRET_NOT_FOUND,
          HOST_ACCESS_MISMATCH,
          HOST_KEY_MISMATCH,
          SSH_AUTH_FAILED,
          SSH_ALGORITHMS_UNSUPPORTED,
          INSUFFICIENT_DISK,
          ARCHITECTURE_MISMATCH,
          ARTIFACT_DIGEST_MISMATCH,
          DRAIN_BLOCKED,
          BACKUP_FAILED,
          INSTALL_FAILED,
          SERVICE_RESTART_FAILED,
          VERIFY_TIMEOUT,
          REMOTE_COMMAND_FAILED,
          ROLLBACK_FAILED,
          ETCD_SNAPSHOT_FAILED,
          KUBEADM_UPGRADE_FAILED,
          OS_IMAGE_DID_NOT_BOOT,
          HOST_DID_NOT_RETURN,
          CONTROL_PLANE_UNHEALTHY,
          NODE_UPGRADE_FAILED);

  private UpgradeFailures() {}

  public static ApplicationFailure nonRetryable(String type, String message, Object... details) {
    return ApplicationFailure.newNonRetryableFailure(message, type, details);
  }

  public static ApplicationFailure retryable(String type, String message, Object... details) {
    return ApplicationFailure.newFailure(message, type, details);
  }

  public static boolean isRetryable(String type) {
    return !NON_RETRYABLE.contains(type);
  }
}
