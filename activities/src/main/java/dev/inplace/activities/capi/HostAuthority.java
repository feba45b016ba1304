package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.ResourceFields.label;
import static dev.inplace.activities.capi.ResourceFields.maps;
import static dev.inplace.activities.capi.ResourceFields.string;

import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Predicate;

/**
 * Re-derives the host a step is asked to touch from the management cluster, so that a workflow
 * input is never authority over which host or Secret an activity uses (issue 34, H4). In order: the
 * Machine (by name in the Secrets' namespace, or by its Node's name for inputs from before the
 * name was carried), then its Cluster, then the SSH settings and host layout the cluster's resources
 * configure ({@link ConfiguredAccess}). The run's address must be one of the Machine's addresses,
 * its Node the Machine's Node. Reads Machines, Clusters, upgrade resources and host profiles only,
 * never a Secret: the host activities call it before the connector reads any.
 *
 * <p>Refusals are non-retryable: {@code MachineNotFound}, {@code ClusterNotFound}, or {@code
 * HostAccessMismatch} naming what differs.
 */
public final class HostAuthority {
  private static final List<String> ADDRESS_TYPES = List.of("InternalIP", "ExternalIP");

  private final KubernetesClient management;
  private final CapiObjectStore store;

  public HostAuthority(KubernetesClient management) {
    this.management = management;
    this.store = new CapiObjectStore(management);
  }

  /**
   * The access {@code asked} names, as the management cluster confirms it: the same address and SSH
   * settings, the Machine's namespace, cluster and name. {@code profile} must be a layout the
   * cluster's resources give the host (its directories are checked against the allowlist apart).
   */
  public HostAccess confirm(HostAccess asked, Distribution distribution, HostProfile profile) {
    if (profile == null) {
      throw invalid("profile is required");
    }
    return confirm(asked, distribution, layout -> layout.equals(profile),
        "host layout " + describe(profile));
  }

  /** As {@link #confirm(HostAccess, Distribution, HostProfile)} for a step that names only a service unit. */
  public HostAccess confirmService(HostAccess asked, Distribution distribution, String service) {
    return confirm(asked, distribution,
        layout -> layout.serverService().equals(service) || layout.agentService().equals(service),
        "service " + service);
  }

  private HostAccess confirm(
      HostAccess asked, Distribution requested, Predicate<HostProfile> layoutMatches, String layoutWhat) {
    if (asked == null || asked.ssh() == null || blank(asked.secretNamespace()) || blank(asked.nodeName())
        || blank(asked.address())) {
      throw invalid("host access with a namespace, node, address and SSH settings is required");
    }
    Distribution distribution = requested == null ? Distribution.K3S : requested;
    String namespace = asked.secretNamespace();
    GenericKubernetesResource machine = machine(asked);
    String machineName = machine.getMetadata().getName();
    String what = "Machine " + namespace + "/" + machineName;
    String cluster = clusterOf(machine);
    if (cluster == null) {
      throw mismatch(what + " names no cluster (label " + CapiResources.CLUSTER_NAME_LABEL + ")");
    }
    if (!blank(asked.clusterName()) && !asked.clusterName().equals(cluster)) {
      throw mismatch(what + " belongs to cluster " + cluster + ", not " + asked.clusterName());
    }
    if (store.get(CapiResources.CLUSTER, namespace, cluster, UpgradeFailures.CLUSTER_NOT_FOUND) == null) {
      throw UpgradeFailures.nonRetryable(UpgradeFailures.CLUSTER_NOT_FOUND,
          "Cluster " + namespace + "/" + cluster + " (of " + what + ") not found");
    }
    String node = string(machine, "status", "nodeRef", "name");
    if (!asked.nodeName().equals(node)) {
      throw mismatch(what + "'s Node is " + (node == null ? "not set" : node) + ", not " + asked.nodeName());
    }
    List<String> addresses = addresses(machine);
    if (!addresses.contains(asked.address())) {
      throw mismatch("address " + asked.address() + " is not one of " + what + "'s addresses " + addresses
          + ": a run's input does not choose the host");
    }
    List<ConfiguredAccess> configured = ConfiguredAccess.read(management, namespace, cluster, machine);
    List<ConfiguredAccess> sameSsh = configured.stream().filter(c -> c.sshMatches(asked.ssh())).toList();
    if (sameSsh.isEmpty()) {
      throw mismatch("SSH settings (" + ConfiguredAccess.describe(asked.ssh()) + ") are not ones cluster "
          + namespace + "/" + cluster + "'s resources configure for " + what + " (" + sources(configured)
          + "): a run's input does not choose the Secrets");
    }
    boolean layoutFound = false;
    for (ConfiguredAccess c : sameSsh) {
      for (HostOs os : HostOs.values()) { // the convention: the standard layout, on either kind of host
        HostProfile layout = c.layoutFor(distribution, os);
        layoutFound |= layout != null && layoutMatches.test(layout);
      }
    }
    if (!layoutFound) {
      throw mismatch(layoutWhat + " is not one cluster " + namespace + "/" + cluster + "'s resources name for "
          + what + " (" + sources(sameSsh) + ", " + distribution.name().toLowerCase(java.util.Locale.ROOT)
          + "): a run's input does not choose the host's directories");
    }
    return new HostAccess(namespace, node, asked.address(), asked.ssh(), cluster, machineName);
  }

  /** The Machine by name in the namespace; by its Node's name when the input names none (older inputs). */
  private GenericKubernetesResource machine(HostAccess asked) {
    String namespace = asked.secretNamespace();
    if (!blank(asked.machineName())) {
      GenericKubernetesResource m =
          store.get(CapiResources.MACHINE, namespace, asked.machineName(), UpgradeFailures.MACHINE_NOT_FOUND);
      if (m == null) {
        throw UpgradeFailures.nonRetryable(UpgradeFailures.MACHINE_NOT_FOUND, "Machine " + namespace + "/"
            + asked.machineName() + " not found: a step acts only on a Machine of the management cluster, and reads"
            + " Secrets only in its Cluster's namespace");
      }
      return m;
    }
    List<GenericKubernetesResource> candidates = blank(asked.clusterName())
        ? management.genericKubernetesResources(CapiResources.MACHINE).inNamespace(namespace).list().getItems()
        : store.list(CapiResources.MACHINE, namespace, CapiResources.CLUSTER_NAME_LABEL, asked.clusterName());
    return candidates.stream()
        .filter(m -> asked.nodeName().equals(string(m, "status", "nodeRef", "name")))
        .findFirst()
        .orElseThrow(() -> UpgradeFailures.nonRetryable(UpgradeFailures.MACHINE_NOT_FOUND,
            "no Machine in namespace " + namespace + " has Node " + asked.nodeName()
                + ": a step acts only on a Machine of the management cluster"));
  }

  private static String clusterOf(GenericKubernetesResource machine) {
    String label = label(machine, CapiResources.CLUSTER_NAME_LABEL);
    return label != null ? label : string(machine, "spec", "clusterName");
  }

  /** The Machine's InternalIP and ExternalIP addresses, the kinds a run's address is taken from. */
  private static List<String> addresses(GenericKubernetesResource machine) {
    List<String> found = new ArrayList<>();
    for (Map<?, ?> a : maps(machine, "status", "addresses")) {
      if (ADDRESS_TYPES.contains(a.get("type")) && a.get("address") instanceof String text && !text.isBlank()) {
        found.add(text);
      }
    }
    return found;
  }

  private static String sources(List<ConfiguredAccess> configured) {
    return String.join("; ", configured.stream().map(ConfiguredAccess::source).toList());
  }

  private static String describe(HostProfile p) {
    return "(binDir " + p.binDir() + ", imagesDir " + p.imagesDir() + ", stagingDir " + p.stagingDir() + ", backupDir "
        + p.backupDir() + ", services " + p.serverService() + "/" + p.agentService() + ", os "
        + p.os().name().toLowerCase(java.util.Locale.ROOT) + ")";
  }

  private static RuntimeException mismatch(String message) {
    return UpgradeFailures.nonRetryable(UpgradeFailures.HOST_ACCESS_MISMATCH, message);
  }

  private static RuntimeException invalid(String message) {
    return UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, message);
  }

  private static boolean blank(String text) {
    return text == null || text.isBlank();
  }
}
