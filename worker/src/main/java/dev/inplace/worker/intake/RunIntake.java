package dev.inplace.worker.intake;

import dev.inplace.activities.artifacts.ArtifactSourcePolicy;
import dev.inplace.activities.capi.CapiResources;
import dev.inplace.activities.capi.ClusterTopology;
import dev.inplace.workflows.api.Artifact;
import dev.inplace.workflows.api.ArtifactRules;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.MachineInfo;
import dev.inplace.workflows.api.NodeUpgradeTemplate;
import dev.inplace.workflows.api.ReleaseCatalogue;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.api.VersionSkew;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Secret;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The one intake of both doors (the CR watcher and the UpdateMachine hook): {@link #admit} turns
 * what a door was asked ({@link IntakeRequest}) into a run's inputs ({@link RunInputs}), or refuses
 * with a failure type of {@code UpgradeFailures} ({@link IntakeRefusal}). It reads only: the Cluster
 * (for its topology), the InplaceHostProfile a request names, Secrets (that they and their keys
 * exist, never their contents) and the release
 * catalogue.
 */
public final class RunIntake {
  /** The data key of CAPI's {@code <cluster>-kubeconfig} Secret. */
  public static final String KUBECONFIG_KEY = "value";
  public static final String KUBECONFIG_SUFFIX = "-kubeconfig";

  private final KubernetesClient management;
  private final ArtifactSourcePolicy artifacts;
  private final HostProfiles profiles;

  public RunIntake(KubernetesClient management, ArtifactSourcePolicy artifacts) {
    this.management = management;
    this.artifacts = artifacts;
    this.profiles = new HostProfiles(management);
  }

  /**
   * Checks a request and builds the run's inputs, in one order for both doors: what was asked
   * ({@code InvalidRequest}: version, arch, OS, SSH settings, host layout, drain, timeouts, window,
   * each Machine's node target), then what it refers to: the Cluster's topology when the run records
   * versions on cluster objects ({@code TopologyManagedCluster}), the version skew of the Machines
   * ({@code UnsupportedVersionSkew}), the named host profile and the allowlist of the host layout's
   * directories ({@code InvalidRequest}), the Secrets ({@code SecretNotFound}) and the release in the
   * catalogue ({@code ArtifactUnavailable}, {@code InvalidRequest} for an unsafe one).
   *
   * @throws IntakeUnavailable when something could not be read (try again later)
   */
  public RunInputs admit(IntakeRequest ask) throws IntakeRefusal {
    AskedValues values = AskedValues.check(ask);
    if (ask.recording() == IntakeRequest.Recording.CLUSTER_OBJECTS) {
      refuseTopologyCluster(ask.cluster());
    }
    checkSkew(ask.machines(), values.version());
    HostProfile profile = profiles.resolve(ask.distribution(), values.os(), values.hostProfile(), ask.fields());
    requireRunSecrets(ask.cluster(), values.ssh());
    ReleaseCatalogue.Release release = release(ask.cluster().namespace(), ask.catalogue().configMap(),
        ask.catalogue().keyOrDefault(), values.version(), ask.distribution(), values.arch(), values.os());
    NodeUpgradeTemplate template = new NodeUpgradeTemplate(ask.distribution(), values.version(), release.artifacts(),
        profile, values.ssh(), values.drain(), values.readyTimeoutSeconds(), values.minFreeBytes(),
        values.arch());
    RunInputs inputs = new RunInputs(ask.cluster(), template, values.window(), ask.machines());
    for (MachineInfo m : inputs.machines()) {
      try {
        inputs.request(m);
      } catch (IllegalArgumentException e) {
        throw IntakeRefusal.invalid("Machine " + m.name() + ": " + e.getMessage());
      }
    }
    return inputs;
  }

  /**
   * {@code TopologyManagedCluster} when the Cluster has {@code spec.topology} (a ClusterClass
   * cluster): its topology controller owns the control-plane and MachineDeployment versions and
   * would overwrite the versions a run records, then roll out replacements. A missing Cluster is
   * left to the caller's own {@code ClusterNotFound}.
   */
  void refuseTopologyCluster(ClusterRef cluster) throws IntakeRefusal {
    GenericKubernetesResource found = read(() -> management.genericKubernetesResources(CapiResources.CLUSTER)
        .inNamespace(cluster.namespace()).withName(cluster.name()).get(), "Cluster " + cluster);
    Optional<String> managed = ClusterTopology.refusal(cluster, found);
    if (managed.isPresent()) {
      throw new IntakeRefusal(UpgradeFailures.TOPOLOGY_MANAGED_CLUSTER, managed.get());
    }
  }

  /** The SSH key, the pinned host keys and the workload kubeconfig Secrets all exist with their keys. */
  void requireRunSecrets(ClusterRef cluster, SshSettings ssh) throws IntakeRefusal {
    requireSecret(cluster.namespace(), ssh.privateKeySecret(), SshSettings.PRIVATE_KEY_DATA_KEY, "the SSH private key");
    requireSecret(cluster.namespace(), ssh.knownHostsSecret(), SshSettings.KNOWN_HOSTS_DATA_KEY, "the pinned host keys");
    requireSecret(cluster.namespace(), cluster.name() + KUBECONFIG_SUFFIX, KUBECONFIG_KEY,
        "the workload cluster's kubeconfig");
  }

  /** {@code SecretNotFound} when the Secret or its data key is missing. */
  private void requireSecret(String namespace, String name, String key, String what) throws IntakeRefusal {
    String id = "Secret " + namespace + "/" + name;
    Secret secret = readInClusterNamespace(() -> management.secrets().inNamespace(namespace).withName(name).get(), id,
        namespace);
    if (secret == null) {
      throw new IntakeRefusal(UpgradeFailures.SECRET_NOT_FOUND, id + " (" + what + ") not found");
    }
    boolean present = (secret.getData() != null && secret.getData().containsKey(key))
        || (secret.getStringData() != null && secret.getStringData().containsKey(key));
    if (!present) {
      throw new IntakeRefusal(UpgradeFailures.SECRET_NOT_FOUND, id + " (" + what + ") has no data key " + key);
    }
  }

  /**
   * The release of {@code version} from the catalogue ConfigMap, after the catalogue rules: sources
   * (https, allowed hosts, mirror directory), sizes, and install paths in the distribution's layout.
   */
  public ReleaseCatalogue.Release release(
      String namespace, String configMap, String key, String version, Distribution distribution, String arch)
      throws IntakeRefusal {
    return release(namespace, configMap, key, version, distribution, arch, HostOs.STANDARD);
  }

  /** The release of {@code version} for hosts of {@code os} (Kairos: one OS image); see above. */
  public ReleaseCatalogue.Release release(
      String namespace, String configMap, String key, String version, Distribution distribution, String arch,
      HostOs os) throws IntakeRefusal {
    String what = "ConfigMap " + namespace + "/" + configMap;
    ConfigMap map = readInClusterNamespace(
        () -> management.configMaps().inNamespace(namespace).withName(configMap).get(), what, namespace);
    if (map == null) {
      throw new IntakeRefusal(UpgradeFailures.ARTIFACT_UNAVAILABLE, "release catalogue " + what + " not found");
    }
    Map<String, String> data = map.getData() == null ? Map.of() : map.getData();
    String json = data.get(key);
    if (json == null) {
      throw new IntakeRefusal(UpgradeFailures.ARTIFACT_UNAVAILABLE,
          "release catalogue " + what + " has no key " + key + " (it has " + data.keySet() + ")");
    }
    ReleaseCatalogue catalogue;
    try {
      catalogue = ReleaseCatalogue.parse(json, what + " key " + key);
    } catch (IllegalArgumentException e) {
      throw new IntakeRefusal(UpgradeFailures.INVALID_REQUEST, e.getMessage());
    }
    ReleaseCatalogue.Release release;
    try {
      release = catalogue.find(version, distribution, arch, os);
    } catch (IllegalArgumentException e) {
      throw new IntakeRefusal(UpgradeFailures.ARTIFACT_UNAVAILABLE, e.getMessage() + " (" + what + ")");
    }
    checkArtifacts(release.artifacts(), distribution, os, what);
    return release;
  }

  /** The catalogue rules on a release's artifacts for hosts of {@code os}; {@code InvalidRequest} naming the first problem. */
  private void checkArtifacts(List<Artifact> list, Distribution distribution, HostOs os, String source)
      throws IntakeRefusal {
    Optional<String> problem = ArtifactRules.problem(list, distribution, os);
    for (Artifact a : list) {
      if (problem.isPresent()) {
        break;
      }
      problem = artifacts.problem(a);
    }
    if (problem.isPresent()) {
      throw new IntakeRefusal(UpgradeFailures.INVALID_REQUEST, "release catalogue " + source + ": " + problem.get());
    }
  }

  /** {@code UnsupportedVersionSkew} for a downgrade or a jump of more than one minor ({@link VersionSkew}). */
  static void checkSkew(List<MachineInfo> machines, String target) throws IntakeRefusal {
    Optional<String> problem = VersionSkew.problem(machines, target);
    if (problem.isPresent()) {
      throw new IntakeRefusal(UpgradeFailures.UNSUPPORTED_VERSION_SKEW, problem.get());
    }
  }

  /**
   * Where the worker may read the Secrets and ConfigMaps of clusters: deploy/default and
   * deploy/extension grant {@code get} on them only through a Role in each namespace this list names.
   */
  static final String NAMESPACE_LIST = "deploy/cluster-namespaces/list/namespaces.yaml";

  /**
   * A Secret or ConfigMap of a cluster's namespace. The API server answers 403 where the worker has
   * no Role: the message names the namespace and the list it is missing from, and the request is
   * tried again later (it goes through once an administrator lists the namespace).
   */
  private static <T> T readInClusterNamespace(Supplier<T> call, String what, String namespace) {
    try {
      return call.get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 403) {
        throw new IntakeUnavailable("cannot read " + what + ": HTTP 403: the worker may read Secrets and ConfigMaps"
            + " only in the namespaces its RBAC grants (" + NAMESPACE_LIST + ", or deploy/namespaced's watched"
            + " namespace), and namespace " + namespace + " is not among them (docs/install.md: add it)", e);
      }
      throw new IntakeUnavailable("cannot read " + what + ": HTTP " + e.getCode(), e);
    }
  }

  private static <T> T read(Supplier<T> call, String what) {
    try {
      return call.get();
    } catch (KubernetesClientException e) {
      throw new IntakeUnavailable("cannot read " + what + ": HTTP " + e.getCode(), e);
    }
  }
}
