package dev.inplace.workflows.api;

/** The Kubernetes distribution a cluster runs; selects the host profile and the remote steps. */
public enum Distribution {
  K3S,
  KUBEADM
}
