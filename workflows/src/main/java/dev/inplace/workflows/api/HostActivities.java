package dev.inplace.workflows.api;

import io.temporal.activity.ActivityInterface;
import io.temporal.activity.ActivityMethod;
import java.util.List;

/**
 * Steps run on a node's host over SSH (host keys pinned). Every method observes before it acts and is
 * safe to run again after a crash. Secrets are resolved from the references in {@link HostAccess}.
 */
@ActivityInterface
public interface HostActivities {

  /** Read-only: reachability, pinned host key, architecture, free disk, installed files and version. */
  @ActivityMethod
  HostFacts inspectHost(HostInspectRequest request);

  /**
   * Uploads each artifact to the staging dir (temp name, then rename) and checks its sha256 on the
   * host. Skips artifacts already staged or installed with the right digest. Heartbeats bytes sent.
   */
  @ActivityMethod
  StageResult stageArtifacts(StageRequest request);

  /** Keeps a copy of each current binary in the backup dir, checked against its preflight digest. */
  @ActivityMethod
  BackupResult backupBinaries(BackupRequest request);

  /** Swaps staged binaries into place with an atomic rename; drops image archives into place. */
  @ActivityMethod
  InstallResult installArtifacts(InstallRequest request);

  /**
   * Runs the distribution's own upgrade command with the newly installed binaries, for
   * distributions that have one ({@link Distribution#hasUpgradeCommand()}). kubeadm: {@code kubeadm
   * upgrade plan} and {@code kubeadm upgrade apply V --yes} on the first control plane ({@code
   * UpgradeConfiguration} through {@code --config} from v1.30), {@code kubeadm upgrade node}
   * elsewhere. Idempotent: kubeadm re-runs cleanly, and a control plane whose static-pod manifests
   * already carry the target is reported as already upgraded.
   */
  @ActivityMethod
  UpgradeCommandResult runUpgradeCommand(UpgradeCommandRequest request);

  /** Restarts the distribution's service and reports whether it is active. */
  @ActivityMethod
  ServiceResult restartService(ServiceRequest request);

  /** Compensation: puts the backed-up binaries back and removes image archives this run added. */
  @ActivityMethod
  RestoreResult restoreBinaries(RestoreRequest request);

  /**
   * Takes an etcd snapshot on a control-plane host before anything changes (k3s: {@code k3s
   * etcd-snapshot save --name NAME}; kubeadm: {@code etcdctl snapshot save} with the etcd static
   * pod's certificates, into {@code NAME.db}). Idempotent: a snapshot whose file name starts with {@code
   * name} is found and returned instead of taking another.
   */
  @ActivityMethod
  EtcdSnapshotResult snapshotEtcd(EtcdSnapshotRequest request);

  /**
   * Fetches every artifact into the worker's cache and verifies its sha256 (preflight: a missing or
   * mismatching artifact refuses the run before any node is touched).
   */
  @ActivityMethod
  ArtifactCheckResult verifyArtifacts(ArtifactCheckRequest request);

  record EtcdSnapshotRequest(HostAccess host, Distribution distribution, HostProfile profile, String name) {}

  /** @param location the snapshot file on the host */
  record EtcdSnapshotResult(String name, String location, boolean alreadyTaken) {}

  record ArtifactCheckRequest(List<Artifact> artifacts) {}

  record ArtifactCheckResult(List<String> verified) {}

  record HostInspectRequest(
      HostAccess host,
      Distribution distribution,
      NodeRole role,
      HostProfile profile,
      List<Artifact> artifacts) {}

  /** A file found on the host; {@code sha256} is null when the file does not exist. */
  record InstalledFile(String path, String sha256) {}

  /**
   * @param arch {@code uname -m} normalised to Go/Kubernetes names ({@code amd64}, {@code arm64})
   * @param stagingFreeBytes free bytes on the staging filesystem
   * @param installed the current state of each artifact's install path
   * @param installedVersion the version the installed binary reports, or null if none
   * @param serviceActive whether the node's service is running
   */
  record HostFacts(
      String arch,
      long stagingFreeBytes,
      List<InstalledFile> installed,
      String installedVersion,
      boolean serviceActive) {}

  /**
   * @param distribution whose host steps to use; null (requests of runs started before the field
   *     existed) means K3S
   */
  record StageRequest(HostAccess host, HostProfile profile, List<Artifact> artifacts, Distribution distribution) {
    public StageRequest(HostAccess host, HostProfile profile, List<Artifact> artifacts) {
      this(host, profile, artifacts, Distribution.K3S);
    }
  }

  record StageResult(List<String> uploaded, List<String> alreadyPresent, long bytesSent) {}

  /** Progress heartbeated while staging: artifacts finished so far. */
  record StageProgress(List<String> done, long bytesSent) {}

  record BackupRequest(
      HostAccess host, HostProfile profile, List<InstalledFile> current, Distribution distribution) {
    public BackupRequest(HostAccess host, HostProfile profile, List<InstalledFile> current) {
      this(host, profile, current, Distribution.K3S);
    }
  }

  record BackupResult(List<String> backedUp, List<String> alreadyBackedUp) {}

  /** kubeadm also imports each image archive with {@code ctr -n k8s.io images import}. */
  record InstallRequest(HostAccess host, HostProfile profile, List<Artifact> artifacts, Distribution distribution) {
    public InstallRequest(HostAccess host, HostProfile profile, List<Artifact> artifacts) {
      this(host, profile, artifacts, Distribution.K3S);
    }
  }

  record InstallResult(List<String> installed, List<String> alreadyInstalled) {}

  /** kubeadm runs {@code systemctl daemon-reload} before the restart (the packages ship drop-ins). */
  record ServiceRequest(HostAccess host, String service, Distribution distribution) {
    public ServiceRequest(HostAccess host, String service) {
      this(host, service, Distribution.K3S);
    }
  }

  /**
   * @param role control plane or worker
   * @param targetVersion the version the installed binaries report, for example {@code v1.31.2}
   * @param firstControlPlane whether this node upgrades the cluster's control plane ({@code kubeadm
   *     upgrade apply}) rather than only itself ({@code kubeadm upgrade node})
   */
  record UpgradeCommandRequest(
      HostAccess host,
      Distribution distribution,
      HostProfile profile,
      NodeRole role,
      String targetVersion,
      boolean firstControlPlane) {}

  /**
   * @param command the command run, for the step's summary ({@code kubeadm upgrade apply v1.31.2})
   * @param alreadyUpgraded true when the host already was at the target and nothing was run
   * @param backupDir the newest {@code /etc/kubernetes/tmp/kubeadm-backup-manifests-*} on a control
   *     plane (kubeadm's own copy of the previous static-pod manifests), empty when there is none
   */
  record UpgradeCommandResult(String command, boolean alreadyUpgraded, String backupDir) {}

  record ServiceResult(String service, boolean active) {}

  /**
   * @param previous the files as they were before the run (from preflight); a null digest means the
   *     file did not exist and is removed
   * @param artifacts this run's artifacts, whose image archives are removed if the run added them
   */
  record RestoreRequest(
      HostAccess host,
      HostProfile profile,
      List<InstalledFile> previous,
      List<Artifact> artifacts,
      Distribution distribution) {
    public RestoreRequest(
        HostAccess host, HostProfile profile, List<InstalledFile> previous, List<Artifact> artifacts) {
      this(host, profile, previous, artifacts, Distribution.K3S);
    }
  }

  /** @param changed true if any file was put back or removed (a restart is then needed) */
  record RestoreResult(List<String> restored, List<String> removed, boolean changed) {}
}
