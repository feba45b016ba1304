package dev.inplace.sandbox.infra;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The sandbox's Cluster API infrastructure provider, a controller on the management cluster:
 *
 * <ul>
 *   <li>a SandboxCluster gets the workload API server as its {@code spec.controlPlaneEndpoint}, then
 *       {@code status.initialization.provisioned: true};
 *   <li>a SandboxMachine waits until its Machine has a bootstrap data Secret (CABPK wrote it), then
 *       boots the node ({@link MachineBoot}), sets {@code spec.providerID} to the one the node
 *       registers with ({@code sandbox://<namespace>/<machine>}), its addresses and
 *       {@code status.initialization.provisioned: true}.
 * </ul>
 *
 * It looks at its objects every 300 ms (the test bed holds a few dozen of them).
 */
public final class SandboxInfraProvider implements AutoCloseable {
  private static final Logger log = LoggerFactory.getLogger(SandboxInfraProvider.class);
  private static final ResourceDefinitionContext MACHINES = new ResourceDefinitionContext.Builder()
      .withGroup("cluster.x-k8s.io").withVersion("v1beta2").withKind("Machine").withPlural("machines").withNamespaced(true).build();
  static final String CONTROL_PLANE_LABEL = "cluster.x-k8s.io/control-plane";

  private final KubernetesClient management;
  private final String endpointHost;
  private final int endpointPort;
  private final MachineBoot boot;
  private final ScheduledExecutorService loop;
  /** Machines booted, by {@code namespace/name}, with their node's address. */
  private final Map<String, String> booted = new java.util.concurrent.ConcurrentHashMap<>();

  private SandboxInfraProvider(KubernetesClient management, String endpointHost, int endpointPort, MachineBoot boot) {
    this.management = management;
    this.endpointHost = endpointHost;
    this.endpointPort = endpointPort;
    this.boot = boot;
    this.loop = Executors.newSingleThreadScheduledExecutor(r -> {
      Thread t = new Thread(r, "sandbox-infra-provider");
      t.setDaemon(true);
      return t;
    });
  }

  /** Installs the CRDs and starts the controller; every SandboxCluster's endpoint is {@code host:port}. */
  public static SandboxInfraProvider start(KubernetesClient management, String host, int port, MachineBoot boot) {
    SandboxInfraCrds.install(management);
    SandboxInfraProvider provider = new SandboxInfraProvider(management, host, port, boot);
    provider.loop.scheduleWithFixedDelay(provider::reconcileAll, 0, 300, TimeUnit.MILLISECONDS);
    return provider;
  }

  /** The providerID a Machine's node registers with. */
  public static String providerId(String namespace, String machine) {
    return "sandbox://" + namespace + "/" + machine;
  }

  private void reconcileAll() {
    try {
      management.genericKubernetesResources(SandboxInfraCrds.CLUSTER).inAnyNamespace().list().getItems()
          .forEach(this::reconcileCluster);
      for (GenericKubernetesResource machine : management.genericKubernetesResources(SandboxInfraCrds.MACHINE).inAnyNamespace().list().getItems()) {
        reconcileMachine(machine);
      }
    } catch (KubernetesClientException | IllegalStateException e) {
      log.debug("sandbox infrastructure provider: will retry: {}", e.getMessage());
    }
  }

  private void reconcileCluster(GenericKubernetesResource cluster) {
    if (provisioned(cluster)) {
      return;
    }
    String ns = cluster.getMetadata().getNamespace();
    String name = cluster.getMetadata().getName();
    management.genericKubernetesResources(SandboxInfraCrds.CLUSTER).inNamespace(ns).withName(name).edit(c -> {
      spec(c).put("controlPlaneEndpoint", Map.of("host", endpointHost, "port", endpointPort));
      return c;
    });
    markProvisioned(SandboxInfraCrds.CLUSTER, ns, name, List.of());
    log.info("SandboxCluster {}/{} provisioned: endpoint {}:{}", ns, name, endpointHost, endpointPort);
  }

  private void reconcileMachine(GenericKubernetesResource infraMachine) {
    String ns = infraMachine.getMetadata().getNamespace();
    if (infraMachine.getMetadata().getDeletionTimestamp() != null) {
      return;
    }
    OwnerReference owner = infraMachine.getMetadata().getOwnerReferences().stream()
        .filter(o -> "Machine".equals(o.getKind())).findFirst().orElse(null);
    if (owner == null || provisioned(infraMachine)) {
      return;
    }
    GenericKubernetesResource machine = management.genericKubernetesResources(MACHINES).inNamespace(ns).withName(owner.getName()).get();
    if (machine == null || bootstrapSecret(machine) == null) {
      return; // CABPK has not written the bootstrap data yet: a real host would have nothing to boot with
    }
    String name = machine.getMetadata().getName();
    String providerId = providerId(ns, name);
    boolean controlPlane = machine.getMetadata().getLabels() != null && machine.getMetadata().getLabels().containsKey(CONTROL_PLANE_LABEL);
    String address = booted.get(ns + "/" + name);
    if (address == null) {
      boolean first = controlPlane && firstControlPlane(ns, machine);
      address = boot.boot(ns, name, providerId, String.valueOf(spec(machine).get("version")), controlPlane, first);
      booted.put(ns + "/" + name, address);
    }
    management.genericKubernetesResources(SandboxInfraCrds.MACHINE).inNamespace(ns).withName(infraMachine.getMetadata().getName())
        .edit(m -> {
          spec(m).put("providerID", providerId);
          return m;
        });
    markProvisioned(SandboxInfraCrds.MACHINE, ns, infraMachine.getMetadata().getName(),
        List.of(Map.of("type", "InternalIP", "address", address), Map.of("type", "Hostname", "address", name)));
    log.info("SandboxMachine {}/{} provisioned for Machine {} ({})", ns, infraMachine.getMetadata().getName(), name, providerId);
  }

  /** The first control-plane Machine is the one KCP creates while the control plane is not yet initialized. */
  private boolean firstControlPlane(String ns, GenericKubernetesResource machine) {
    String cluster = String.valueOf(spec(machine).get("clusterName"));
    return management.genericKubernetesResources(MACHINES).inNamespace(ns)
        .withLabel(CONTROL_PLANE_LABEL).withLabel("cluster.x-k8s.io/cluster-name", cluster).list().getItems().stream()
        .filter(m -> booted.containsKey(ns + "/" + m.getMetadata().getName()))
        .allMatch(m -> m.getMetadata().getName().equals(machine.getMetadata().getName()));
  }

  private void markProvisioned(ResourceDefinitionContext kind, String ns, String name, List<Map<String, String>> addresses) {
    management.genericKubernetesResources(kind).inNamespace(ns).withName(name).editStatus(r -> {
      Map<String, Object> status = new LinkedHashMap<>();
      status.put("initialization", Map.of("provisioned", true));
      if (!addresses.isEmpty()) {
        status.put("addresses", addresses);
      }
      r.setAdditionalProperty("status", status);
      return r;
    });
  }

  @SuppressWarnings("unchecked")
  private static boolean provisioned(GenericKubernetesResource r) {
    Object status = r.getAdditionalProperties().get("status");
    if (!(status instanceof Map<?, ?> s) || !(s.get("initialization") instanceof Map<?, ?> init)) {
      return false;
    }
    return Boolean.TRUE.equals(((Map<String, Object>) init).get("provisioned"));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> spec(GenericKubernetesResource r) {
    return (Map<String, Object>) r.getAdditionalProperties().computeIfAbsent("spec", k -> new LinkedHashMap<>());
  }

  @SuppressWarnings("unchecked")
  private static String bootstrapSecret(GenericKubernetesResource machine) {
    Object bootstrap = spec(machine).get("bootstrap");
    return bootstrap instanceof Map<?, ?> b ? (String) ((Map<String, Object>) b).get("dataSecretName") : null;
  }

  @Override
  public void close() {
    loop.shutdownNow();
  }
}
