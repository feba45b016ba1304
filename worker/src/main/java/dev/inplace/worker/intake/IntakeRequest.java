package dev.inplace.worker.intake;

import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.PdbBlockedAction;
import java.util.List;

/**
 * What a door was asked to do, in no door's terms: the custom resource watcher translates a spec
 * into one, the UpdateMachine hook a request and the ExtensionConfig's settings. {@link
 * RunIntake#admit} checks it and builds the run's inputs. A null field means "not set": the intake
 * applies the one default (documented in docs/crd-reference.md and docs/capi-extension.md).
 *
 * @param cluster the CAPI Cluster; Secrets and the catalogue are read in its namespace
 * @param targetVersion the version to install, as the distribution prints it
 * @param distribution k3s, kubeadm or k0s (each door decides which: the spec, or the bootstrap kind)
 * @param arch the nodes' architecture; null means {@code amd64}
 * @param host the hosts' OS and host profile name; null means the distribution's standard layout on
 *     standard hosts
 * @param ssh how to reach the hosts
 * @param drain drain options; null means {@code DrainOptions.defaults()}
 * @param readyTimeoutSeconds how long a node may take to be Ready at the target; null means 300
 * @param minFreeBytes free space to require beyond the artifacts; null means 0
 * @param window when nodes may start (parent runs only); null means any time
 * @param catalogue where the release catalogue is
 * @param machines the Machines the run upgrades (for the version skew and their node targets)
 * @param singleNodeCluster the cluster has one Machine: its drain is skipped (nowhere to evict to)
 * @param recording which CAPI objects the run records the new version on
 * @param fields how the door names each field in a refusal message
 */
public record IntakeRequest(
    ClusterRef cluster,
    String targetVersion,
    Distribution distribution,
    String arch,
    Host host,
    Ssh ssh,
    Drain drain,
    Long readyTimeoutSeconds,
    Long minFreeBytes,
    Window window,
    Catalogue catalogue,
    List<MachineInfo> machines,
    boolean singleNodeCluster,
    Recording recording,
    FieldNames fields) {

  public IntakeRequest {
    if (cluster == null || distribution == null || ssh == null || catalogue == null || recording == null
        || fields == null) {
      throw new IllegalArgumentException("cluster, distribution, ssh, catalogue, recording and fields are required");
    }
    machines = machines == null ? List.of() : List.copyOf(machines);
  }

  /**
   * The hosts: their OS profile ({@code standard} or {@code kairos}; null means standard) and the
   * name of the admin-owned {@code InplaceHostProfile} their layout comes from (null: the
   * distribution's standard layout). Paths are never asked for directly (issue 34).
   */
  public record Host(String os, String profileName) {
    /** The standard layout on hosts of {@code os}. */
    public static Host ofOs(String os) {
      return new Host(os, null);
    }
  }

  /**
   * SSH settings; a null user means {@code root}, a null port 22.
   *
   * @param privateKeySecret Secret with the key under {@code ssh-privatekey}
   * @param knownHostsSecret Secret with the pinned host keys under {@code known_hosts}
   * @param jumpHost optional {@code host[:port]}
   */
  public record Ssh(String user, Integer port, String privateKeySecret, String knownHostsSecret, String jumpHost) {}

  /** Drain options; each null field keeps its default ({@code DrainOptions.defaults()}). */
  public record Drain(
      Long timeoutSeconds, Boolean deleteEmptyDirData, Boolean force, PdbBlockedAction onBlocked, Boolean skip) {}

  /** A maintenance window, as {@code MaintenanceWindow} takes it. */
  public record Window(List<String> days, String start, String end, String timeZone) {}

  /** The ConfigMap holding the release catalogue JSON; a null or blank key means {@value #DEFAULT_KEY}. */
  public record Catalogue(String configMap, String key) {
    public static final String DEFAULT_KEY = "catalogue.json";

    String keyOrDefault() {
      return key == null || key.isBlank() ? DEFAULT_KEY : key;
    }
  }

  /** Where the run records the new version, which decides whether a ClusterClass cluster is refused. */
  public enum Recording {
    /**
     * On the control-plane object and the MachineDeployments (the parent runs a custom resource
     * starts): on a ClusterClass cluster the topology controller owns those versions, so it is refused
     * ({@code TopologyManagedCluster}).
     */
    CLUSTER_OBJECTS,
    /**
     * On the one Machine only (a NodeUpgrade started by the UpdateMachine hook): CAPI moved the
     * version itself, so a ClusterClass cluster is fine.
     */
    MACHINE_ONLY
  }

  /**
   * The door's name for a field in a refusal message, given its path in the custom resource's spec
   * ({@code arch}, {@code hostProfile.name}, {@code hostProfile.os}, {@code ssh}, {@code drain}, {@code
   * readyTimeoutSeconds}, {@code minFreeBytes}, {@code maintenanceWindow}, {@code version}).
   */
  @FunctionalInterface
  public interface FieldNames {
    String of(String field);
  }
}
