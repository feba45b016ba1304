package dev.inplace.sandbox.extension;

/** The annotations and label CAPI's in-place update flow marks its objects with (capi-contracts.md s.1.3-1.4). */
final class Markers {
  static final String IN_PROGRESS = "in-place-updates.internal.cluster.x-k8s.io/update-in-progress";
  static final String PENDING_HOOKS = "runtime.cluster.x-k8s.io/pending-hooks";
  static final String MOVE_TO = "in-place-updates.internal.cluster.x-k8s.io/move-machines-to-machineset";
  static final String RECEIVE_FROM = "in-place-updates.internal.cluster.x-k8s.io/receive-machines-from-machinesets";
  static final String PENDING_ACK = "in-place-updates.internal.cluster.x-k8s.io/pending-acknowledge-move";
  static final String SET_NAME_LABEL = "cluster.x-k8s.io/set-name";

  private Markers() {}
}
