package dev.inplace.activities.capi;

import static dev.inplace.activities.capi.ResourceFields.annotation;
import static dev.inplace.activities.capi.ResourceFields.at;
import static dev.inplace.activities.capi.ResourceFields.name;
import static dev.inplace.activities.capi.ResourceFields.string;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import dev.inplace.activities.kube.KubeFailures;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.Distribution;
import dev.inplace.workflows.api.HostOs;
import dev.inplace.workflows.api.HostProfile;
import dev.inplace.workflows.api.SshSettings;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;

/**
 * One way the management cluster configures how a cluster's hosts are reached: the SSH settings and
 * host layout an upgrade resource of the cluster names ({@code spec.ssh}, {@code spec.hostProfile}),
 * the ones the UpdateMachine hook recorded on the Machine ({@link
 * ClusterApiActivities#HOST_ACCESS_ANNOTATION}), or the product's naming convention ({@code
 * <cluster>-ssh-key} and {@code <cluster>-known-hosts}, no jump host, the distribution's standard
 * layout), which the hook's settings default to. {@link #read} lists them for one Machine.
 *
 * @param source what configures it, for messages ({@code WorkersUpgrade fleet/u1})
 * @param ssh the SSH settings; for the convention only the Secret names count
 * @param layout the host layout (its OS included); null for the convention, where any OS's
 *     standard layout of the run's distribution counts
 */
record ConfiguredAccess(String source, SshSettings ssh, HostProfile layout, boolean convention) {
  static final String GROUP = "upgrade.inplace.dev";
  static final String VERSION = "v1alpha1";
  static final String HOST_PROFILE_KIND = "InplaceHostProfile";
  private static final List<ResourceDefinitionContext> UPGRADE_RESOURCES = List.of(
      resource("ControlPlaneUpgrade", "controlplaneupgrades", true),
      resource("WorkersUpgrade", "workersupgrades", true));
  static final ResourceDefinitionContext HOST_PROFILE = resource(HOST_PROFILE_KIND, "inplacehostprofiles", false);
  private static final ObjectMapper JSON = new ObjectMapper();

  /** Whether {@code asked} are these SSH settings. */
  boolean sshMatches(SshSettings asked) {
    if (convention) {
      return ssh.privateKeySecret().equals(asked.privateKeySecret())
          && ssh.knownHostsSecret().equals(asked.knownHostsSecret()) && blank(asked.jumpHost());
    }
    return ssh.user().equals(asked.user()) && ssh.port() == asked.port()
        && ssh.privateKeySecret().equals(asked.privateKeySecret())
        && ssh.knownHostsSecret().equals(asked.knownHostsSecret())
        && orEmpty(ssh.jumpHost()).equals(orEmpty(asked.jumpHost()));
  }

  /** The layout this source gives hosts of {@code distribution} and {@code os} (the convention: the standard one). */
  HostProfile layoutFor(Distribution distribution, HostOs os) {
    return convention ? distribution.defaultProfile().withOs(os) : layout;
  }

  /** "key Secret K, known_hosts Secret H[, jump host J], user U, port P": SSH settings as messages name them. */
  static String describe(SshSettings ssh) {
    return "key Secret " + ssh.privateKeySecret() + ", known_hosts Secret " + ssh.knownHostsSecret()
        + (blank(ssh.jumpHost()) ? "" : ", jump host " + ssh.jumpHost()) + ", user " + ssh.user() + ", port " + ssh.port();
  }

  /**
   * What configures the hosts of cluster {@code namespace/cluster} for {@code machine}: every upgrade
   * resource of the cluster in its namespace, the hook's record on the Machine, and the convention.
   * An entry whose host profile cannot be read (deleted, or not valid) is left out.
   */
  static List<ConfiguredAccess> read(
      KubernetesClient management, String namespace, String cluster, GenericKubernetesResource machine) {
    List<ConfiguredAccess> found = new ArrayList<>();
    for (ResourceDefinitionContext type : UPGRADE_RESOURCES) {
      for (GenericKubernetesResource r : list(management, type, namespace)) {
        if (cluster.equals(string(r, "spec", "clusterName"))) {
          fromResource(management, type.getKind() + " " + namespace + "/" + name(r), r).ifPresent(found::add);
        }
      }
    }
    fromHook(management, machine).ifPresent(found::add);
    found.add(new ConfiguredAccess("the convention " + cluster + "-ssh-key/" + cluster + "-known-hosts",
        new SshSettings("root", 22, cluster + "-ssh-key", cluster + "-known-hosts", null), null, true));
    return found;
  }

  private static Optional<ConfiguredAccess> fromResource(
      KubernetesClient management, String source, GenericKubernetesResource r) {
    if (!(at(r, "spec", "ssh") instanceof Map<?, ?>)) {
      return Optional.empty();
    }
    Object port = at(r, "spec", "ssh", "port");
    return access(management, source,
        string(r, "spec", "ssh", "user"), port instanceof Number n ? n.intValue() : null,
        string(r, "spec", "ssh", "privateKeySecret"), string(r, "spec", "ssh", "knownHostsSecret"),
        string(r, "spec", "ssh", "jumpHost"), string(r, "spec", "distribution"),
        string(r, "spec", "hostProfile", "os"), string(r, "spec", "hostProfile", "name"));
  }

  private static Optional<ConfiguredAccess> fromHook(KubernetesClient management, GenericKubernetesResource machine) {
    String recorded = annotation(machine, ClusterApiActivities.HOST_ACCESS_ANNOTATION);
    if (recorded == null) {
      return Optional.empty();
    }
    JsonNode a;
    try {
      a = JSON.readTree(recorded);
    } catch (JsonProcessingException e) {
      return Optional.empty();
    }
    return access(management, "the UpdateMachine hook's record on Machine " + machine.getMetadata().getNamespace()
            + "/" + name(machine),
        text(a, "user"), a.path("port").isInt() ? a.path("port").asInt() : null, text(a, "privateKeySecret"),
        text(a, "knownHostsSecret"), text(a, "jumpHost"), text(a, "distribution"), text(a, "os"),
        text(a, "hostProfile"));
  }

  /**
   * The access a source describes, with the intake's defaults (user root, port 22, k3s, standard
   * OS, the standard layout under a named profile's unset fields); empty when it is incomplete.
   */
  private static Optional<ConfiguredAccess> access(KubernetesClient management, String source, String user,
      Integer port, String key, String knownHosts, String jumpHost, String distribution, String os, String profile) {
    try {
      SshSettings ssh = new SshSettings(user == null ? "root" : user, port == null ? 22 : port, key, knownHosts,
          jumpHost);
      Distribution d = distribution == null ? Distribution.K3S : Distribution.valueOf(distribution.toUpperCase(Locale.ROOT));
      HostProfile standard = d.defaultProfile().withOs(HostOs.parse(os));
      if (profile == null) {
        return Optional.of(new ConfiguredAccess(source, ssh, standard, false));
      }
      return layout(management, profile, standard)
          .map(l -> new ConfiguredAccess(source + " (" + HOST_PROFILE_KIND + " " + profile + ")", ssh, l, false));
    } catch (IllegalArgumentException incomplete) {
      return Optional.empty();
    }
  }

  /** An InplaceHostProfile's fields over the standard layout, as the intake resolves it. */
  private static Optional<HostProfile> layout(KubernetesClient management, String name, HostProfile standard) {
    GenericKubernetesResource p;
    try {
      p = management.genericKubernetesResources(HOST_PROFILE).withName(name).get();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return Optional.empty();
      }
      throw KubeFailures.translate(e, UpgradeFailures.INVALID_REQUEST, HOST_PROFILE_KIND + " " + name);
    }
    if (p == null) {
      return Optional.empty();
    }
    return Optional.of(new HostProfile(
        orDefault(string(p, "spec", "binDir"), standard.binDir()),
        orDefault(string(p, "spec", "imagesDir"), standard.imagesDir()),
        orDefault(string(p, "spec", "stagingDir"), standard.stagingDir()),
        orDefault(string(p, "spec", "backupDir"), standard.backupDir()),
        orDefault(string(p, "spec", "serverService"), standard.serverService()),
        orDefault(string(p, "spec", "agentService"), standard.agentService()),
        standard.os()));
  }

  private static List<GenericKubernetesResource> list(
      KubernetesClient management, ResourceDefinitionContext type, String namespace) {
    try {
      return management.genericKubernetesResources(type).inNamespace(namespace).list().getItems();
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        return List.of(); // the CRD is not installed: no such resource configures anything
      }
      throw KubeFailures.translate(e, UpgradeFailures.INVALID_REQUEST, type.getKind() + " objects in " + namespace);
    }
  }

  private static ResourceDefinitionContext resource(String kind, String plural, boolean namespaced) {
    return new ResourceDefinitionContext.Builder()
        .withGroup(GROUP).withVersion(VERSION).withKind(kind).withPlural(plural).withNamespaced(namespaced).build();
  }

  private static String text(JsonNode node, String field) {
    JsonNode value = node.path(field);
    return value.isTextual() && !value.asText().isBlank() ? value.asText() : null;
  }

  private static String orDefault(String value, String fallback) {
    return value == null ? fallback : value;
  }

  private static String orEmpty(String text) {
    return text == null ? "" : text.trim();
  }

  private static boolean blank(String text) {
    return text == null || text.isBlank();
  }
}
