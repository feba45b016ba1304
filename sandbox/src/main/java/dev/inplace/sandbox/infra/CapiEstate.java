package dev.inplace.sandbox.infra;

import dev.inplace.testbed.CapiManagers;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.stream.Collectors;

/**
 * One cluster's Cluster API objects on a real management API server, read as a user judging an
 * in-place upgrade would: which Machines exist (by name and UID), which MachineSets, whether each
 * Machine is up to date at a version, and the control plane's and MachineDeployment's status
 * counts. Also the user's own changes (a merge patch on a spec, a forced resync).
 */
public final class CapiEstate {
  public static final ResourceDefinitionContext MACHINES = core("Machine", "machines");
  public static final ResourceDefinitionContext MACHINE_SETS = core("MachineSet", "machinesets");
  public static final ResourceDefinitionContext MACHINE_DEPLOYMENTS = core("MachineDeployment", "machinedeployments");
  public static final ResourceDefinitionContext CLUSTERS = core("Cluster", "clusters");
  public static final ResourceDefinitionContext KUBEADM_CONTROL_PLANES = new ResourceDefinitionContext.Builder()
      .withGroup("controlplane.cluster.x-k8s.io").withVersion("v1beta2").withKind("KubeadmControlPlane")
      .withPlural("kubeadmcontrolplanes").withNamespaced(true).build();
  public static final ResourceDefinitionContext EXTENSION_CONFIGS = new ResourceDefinitionContext.Builder()
      .withGroup("runtime.cluster.x-k8s.io").withVersion("v1beta2").withKind("ExtensionConfig").withPlural("extensionconfigs")
      .withNamespaced(false).build();
  /** The annotation a user sets to make a controller reconcile an object now. */
  public static final String RESYNC_ANNOTATION = "sandbox.inplace.dev/resync";

  private final KubernetesClient mgmt;
  private final String namespace;
  private final String cluster;
  private final CapiManagers capi;

  public CapiEstate(KubernetesClient mgmt, String namespace, String cluster, CapiManagers capi) {
    this.mgmt = mgmt;
    this.namespace = namespace;
    this.cluster = cluster;
    this.capi = capi;
  }

  public List<GenericKubernetesResource> machines() {
    return mgmt.genericKubernetesResources(MACHINES).inNamespace(namespace).withLabel("cluster.x-k8s.io/cluster-name", cluster)
        .list().getItems();
  }

  /** Every Machine's name and UID: equal before and after means none was created or deleted. */
  public Map<String, String> machineUids() {
    return machines().stream().collect(Collectors.toMap(m -> m.getMetadata().getName(), m -> m.getMetadata().getUid(),
        (a, b) -> a, TreeMap::new));
  }

  public List<String> machineSetNames() {
    return mgmt.genericKubernetesResources(MACHINE_SETS).inNamespace(namespace).withLabel("cluster.x-k8s.io/cluster-name", cluster)
        .list().getItems().stream().map(s -> s.getMetadata().getName()).sorted().toList();
  }

  public GenericKubernetesResource get(ResourceDefinitionContext type, String name) {
    return mgmt.genericKubernetesResources(type).inNamespace(namespace).withName(name).get();
  }

  /** A {@code status} count of the object ({@code replicas}, {@code readyReplicas}, {@code upToDateReplicas}...); 0 when absent. */
  public int count(ResourceDefinitionContext type, String name, String field) {
    GenericKubernetesResource r = get(type, name);
    return r == null ? 0 : ((Number) status(r).getOrDefault(field, 0)).intValue();
  }

  /** Whether the Machines are all Running and the control plane and deployment report them ready. */
  public boolean provisioned(int controlPlanes, int workers) {
    List<GenericKubernetesResource> machines = machines();
    return machines.size() == controlPlanes + workers
        && machines.stream().allMatch(m -> "Running".equals(status(m).get("phase")))
        && count(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE, "readyReplicas") == controlPlanes
        && count(MACHINE_DEPLOYMENTS, KubeadmClusterSeed.MACHINE_DEPLOYMENT, "readyReplicas") == workers;
  }

  /**
   * At {@code version}, UpToDate=True, not deleting, and no in-place update pending (neither CAPI's
   * pending hooks nor its update-in-progress annotation).
   */
  public static boolean upToDateAt(GenericKubernetesResource m, String version) {
    Map<String, String> annotations = m.getMetadata().getAnnotations() == null ? Map.of() : m.getMetadata().getAnnotations();
    return version.equals(spec(m).get("version")) && "True".equals(condition(m, "UpToDate"))
        && m.getMetadata().getDeletionTimestamp() == null
        && !annotations.containsKey("runtime.cluster.x-k8s.io/pending-hooks")
        && !annotations.containsKey("in-place-updates.internal.cluster.x-k8s.io/update-in-progress");
  }

  public static boolean controlPlane(GenericKubernetesResource m) {
    return m.getMetadata().getLabels() != null && m.getMetadata().getLabels().containsKey("cluster.x-k8s.io/control-plane");
  }

  public void mergePatchSpec(ResourceDefinitionContext type, String name, String mergePatch) {
    mgmt.genericKubernetesResources(type).inNamespace(namespace).withName(name).patch(PatchContext.of(PatchType.JSON_MERGE), mergePatch);
  }

  /**
   * Makes every controller reconcile the cluster's objects now (the Cluster, its control plane, its
   * MachineDeployments and Machines): a changed annotation is a watch event for each.
   */
  public void forceResync() {
    String patch = "{\"metadata\":{\"annotations\":{\"" + RESYNC_ANNOTATION + "\":\"" + Instant.now() + "\"}}}";
    mgmt.genericKubernetesResources(CLUSTERS).inNamespace(namespace).withName(cluster).patch(PatchContext.of(PatchType.JSON_MERGE), patch);
    mergePatchSpec(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE, patch);
    mergePatchSpec(MACHINE_DEPLOYMENTS, KubeadmClusterSeed.MACHINE_DEPLOYMENT, patch);
    for (GenericKubernetesResource m : machines()) {
      mergePatchSpec(MACHINES, m.getMetadata().getName(), patch);
    }
  }

  /**
   * Fails at once when a Machine was created or deleted since {@code before}, or a manager exited;
   * true otherwise (for use inside a wait).
   */
  public boolean sameMachines(Map<String, String> before) {
    if (capi != null && !capi.allAlive()) {
      throw new AssertionError("a Cluster API manager stopped\n" + capi.tails());
    }
    Map<String, String> now = machineUids();
    if (!now.equals(before)) {
      throw new AssertionError("CAPI replaced Machines instead of leaving them in place: before " + before + ", now " + now
          + summary());
    }
    return true;
  }

  /** Waits for {@code condition}, polling every 2 s; an AssertionError with the estate's state after {@code atMost}. */
  public void await(String what, Duration atMost, Callable<Boolean> condition) {
    long deadline = System.nanoTime() + atMost.toNanos();
    Exception last = null;
    while (System.nanoTime() < deadline) {
      try {
        if (Boolean.TRUE.equals(condition.call())) {
          return;
        }
      } catch (AssertionError e) {
        throw e;
      } catch (Exception e) {
        last = e;
      }
      sleep(Duration.ofSeconds(2));
    }
    AssertionError failure = new AssertionError(what + ": not reached in " + atMost + summary()
        + (capi == null ? "" : "\n" + capi.tails()));
    if (last != null) {
      failure.initCause(last);
    }
    throw failure;
  }

  /** Each Machine's version, annotations and status, the MachineSets, for a failed proof's message. */
  public String summary() {
    StringBuilder out = new StringBuilder();
    for (GenericKubernetesResource m : machines()) {
      out.append('\n').append(m.getMetadata().getName()).append(" version=").append(spec(m).get("version"))
          .append(" annotations=").append(m.getMetadata().getAnnotations()).append(" status=").append(status(m));
    }
    out.append("\nMachineSets: ").append(machineSetNames());
    GenericKubernetesResource kcp = get(KUBEADM_CONTROL_PLANES, KubeadmClusterSeed.CONTROL_PLANE);
    out.append("\nKubeadmControlPlane: ").append(kcp == null ? "none" : status(kcp));
    return out.toString();
  }

  public static String condition(GenericKubernetesResource r, String type) {
    Object conditions = status(r).get("conditions");
    if (conditions instanceof List<?> list) {
      for (Object c : list) {
        if (c instanceof Map<?, ?> map && type.equals(map.get("type"))) {
          return String.valueOf(map.get("status"));
        }
      }
    }
    return "";
  }

  @SuppressWarnings("unchecked")
  public static Map<String, Object> status(GenericKubernetesResource r) {
    Object s = r == null ? null : r.getAdditionalProperties().get("status");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  @SuppressWarnings("unchecked")
  public static Map<String, Object> spec(GenericKubernetesResource r) {
    Object s = r == null ? null : r.getAdditionalProperties().get("spec");
    return s instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  public static ResourceDefinitionContext core(String kind, String plural) {
    return new ResourceDefinitionContext.Builder().withGroup("cluster.x-k8s.io").withVersion("v1beta2").withKind(kind)
        .withPlural(plural).withNamespaced(true).build();
  }

  private static void sleep(Duration d) {
    try {
      Thread.sleep(d.toMillis());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while waiting", e);
    }
  }
}
