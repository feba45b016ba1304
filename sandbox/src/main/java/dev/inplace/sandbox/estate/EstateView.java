package dev.inplace.sandbox.estate;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.SshSettings;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.nio.file.Path;
import java.util.List;

/**
 * What the demo needs of an estate, whether it runs in the demo's own process ({@link Estate}) or as
 * its own process of the local stack (reached through its kubeconfig and control endpoint).
 */
public interface EstateView {
  /** A client for the management API server. */
  KubernetesClient management();

  /** SSH settings a run uses for this estate: references to the Secrets, never their contents. */
  SshSettings ssh();

  /** The release catalogue file (JSON). */
  Path catalogue();

  ClusterRef cluster();

  /** The MachineDeployments of the cluster, in order. */
  List<String> pools();

  List<Estate.EstateNode> nodes();

  /** Clears every fault armed on a node. */
  void clearFaults(String node);
}
