package dev.inplace.workflows.api;

/**
 * The Kubernetes distribution a cluster runs; selects the host profile and the remote steps. The
 * workflows ask a distribution what it needs (an upgrade command, etcd voter conditions) instead of
 * branching on its name.
 */
public enum Distribution {
  /** One {@code k3s} binary; a service restart upgrades the node. */
  K3S(false, true),
  /**
   * kubeadm, kubelet and kubectl; {@code kubeadm upgrade apply|node} upgrades the static pods and
   * the kubelet configuration before the kubelet restarts.
   */
  KUBEADM(true, false),
  /**
   * One {@code k0s} binary serving as controller or worker; {@code k0s stop}, the swap and {@code k0s
   * start} upgrade the node (docs/k0s.md).
   */
  K0S(false, false);

  private final boolean upgradeCommand;
  private final boolean etcdVoterCondition;

  Distribution(boolean upgradeCommand, boolean etcdVoterCondition) {
    this.upgradeCommand = upgradeCommand;
    this.etcdVoterCondition = etcdVoterCondition;
  }

  /**
   * Whether the node runs the distribution's own upgrade command ({@link UpgradeStep#UPGRADE})
   * between installing the binaries and restarting the service.
   */
  public boolean hasUpgradeCommand() {
    return upgradeCommand;
  }

  /** Whether control-plane Nodes publish k3s's {@code EtcdIsVoter} condition. */
  public boolean reportsEtcdVoterCondition() {
    return etcdVoterCondition;
  }

  /** The standard host layout of this distribution. */
  public HostProfile defaultProfile() {
    return switch (this) {
      case K3S -> HostProfile.k3sDefaults();
      case KUBEADM -> HostProfile.kubeadmDefaults();
      case K0S -> HostProfile.k0sDefaults();
    };
  }

  /** Where this distribution's artifacts may be installed (the catalogue allowlist). */
  public InstallLayout installLayout() {
    return switch (this) {
      case K3S -> InstallLayout.k3s();
      case KUBEADM -> InstallLayout.kubeadm();
      case K0S -> InstallLayout.k0s();
    };
  }
}
