package dev.inplace.workflows.api;

/** Whether a node serves the control plane (k3s server) or only runs workloads (k3s agent). */
public enum NodeRole {
  CONTROL_PLANE,
  WORKER
}
