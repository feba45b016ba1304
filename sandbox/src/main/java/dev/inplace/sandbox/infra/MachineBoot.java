package dev.inplace.sandbox.infra;

/** What happens when the sandbox provider provisions a Machine: the simulated host joins the workload cluster. */
public interface MachineBoot {
  /**
   * Brings up the node for {@code machine}: after this its Node, with {@code providerID}, is on the
   * workload API server. Returns the node's address (its Machine's InternalIP, where its SSH server
   * listens).
   *
   * @param controlPlane whether the Machine belongs to the control plane
   * @param firstControlPlane whether it is the control plane's first (kubeadm init) Machine
   */
  String boot(String namespace, String machine, String providerID, String version, boolean controlPlane, boolean firstControlPlane);

  /** The node of {@code machine} is gone (its Machine was deleted). */
  void shutdown(String namespace, String machine);
}
