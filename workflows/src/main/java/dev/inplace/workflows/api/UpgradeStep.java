package dev.inplace.workflows.api;

import java.util.Locale;

/** The steps of one node's upgrade, in order, followed by the rollback steps. */
public enum UpgradeStep {
  PREFLIGHT,
  STAGE,
  CORDON,
  DRAIN,
  BACKUP,
  INSTALL,
  /**
   * The distribution's own upgrade command, for distributions that have one (kubeadm: {@code
   * kubeadm upgrade apply} on the first control plane, {@code kubeadm upgrade node} elsewhere).
   */
  UPGRADE,
  RESTART,
  VERIFY,
  UNCORDON,
  RECORD,
  /** Compensation: put the previous binaries back, restart, wait for Ready at the old version. */
  RESTORE,
  /** Compensation: uncordon a node we cordoned. */
  RELEASE,
  /** ControlPlaneUpgrade: the etcd snapshot on the first control-plane node, before any change. */
  SNAPSHOT;

  /** The lower-case name used on the command line ({@code --fail worker-1:restart}). */
  public String cliName() {
    return name().toLowerCase(Locale.ROOT);
  }

  public static UpgradeStep fromCliName(String text) {
    for (UpgradeStep s : values()) {
      if (s.cliName().equals(text)) {
        return s;
      }
    }
    throw new IllegalArgumentException("unknown step '" + text + "'");
  }
}
