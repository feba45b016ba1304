package dev.inplace.activities.capi;

import dev.inplace.workflows.api.MachineInfo;
import java.util.List;
import java.util.HashMap;
import io.fabric8.kubernetes.api.model.Node;
import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ObjectNode;
import dev.inplace.activities.kube.KubeClients;
import dev.inplace.activities.kube.KubeFailures;
import dev.inplace.activities.kube.KubeMdc;
import dev.inplace.workflows.api.ClusterApiActivities;
import dev.inplace.workflows.api.ClusterInventory;
import dev.inplace.workflows.api.ClusterRef;
import dev.inplace.workflows.api.HostAccess;
import dev.inplace.workflows.failure.UpgradeFailures;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.temporal.failure.ApplicationFailure;
import java.util.Map;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/** {@link ClusterApiActivities} against the management cluster's CAPI objects (v1beta2). */
public final class ClusterApiActivitiesImpl implements ClusterApiActivities {
  private static final Logger log = LoggerFactory.getLogger(ClusterApiActivitiesImpl.class);
  private static final ObjectMapper JSON = new ObjectMapper();

  private final KubeClients clients;

  public ClusterApiActivitiesImpl(KubeClients clients) {
    this.clients = clients;
  }

  @Override
  public ClusterInventory describeCluster(ClusterRef cluster) {
    if (cluster == null) {
      throw invalid("cluster is required");
    }
    return call(
        "describeCluster",
        new String[] {"cluster", cluster.toString()},
        () -> {
          ClusterInventory inventory = withNodeVersions(reader().read(cluster));
          log.info(
              "Cluster {}: {} {} at {}, {} machines, pools {}",
              cluster,
              inventory.controlPlane().kind(),
              inventory.controlPlane().name(),
              inventory.controlPlaneVersion(),
              inventory.machines().size(),
              inventory.pools().stream()
                  .map(ClusterInventory.PoolInfo::machineDeployment)
                  .toList());
          return inventory;
        });
  }

  /**
   * Replaces each Machine's mirrored {@code status.nodeInfo.kubeletVersion} with what its Node
   * reports now: CAPI mirrors it with a delay, and runs decide on it (already at target, gates).
   * Falls back to the mirror, with a warning, when the workload cluster cannot be read.
   */
  private ClusterInventory withNodeVersions(ClusterInventory inventory) {
    Map<String, String> kubelets = new HashMap<>();
    try {
      for (Node node : clients.workload(inventory.cluster()).nodes().list().getItems()) {
        if (node.getStatus() != null && node.getStatus().getNodeInfo() != null) {
          kubelets.put(node.getMetadata().getName(), node.getStatus().getNodeInfo().getKubeletVersion());
        }
      }
    } catch (RuntimeException e) {
      log.warn(
          "Cluster {}: cannot list the workload cluster's Nodes ({}); using Machine.status.nodeInfo",
          inventory.cluster(),
          e.getMessage());
      return inventory;
    }
    List<MachineInfo> machines =
        inventory.machines().stream()
            .map(
                m ->
                    kubelets.containsKey(m.nodeName())
                        ? new MachineInfo(
                            m.name(), m.nodeName(), m.role(), m.address(), m.version(),
                            kubelets.get(m.nodeName()), m.pool())
                        : m)
            .toList();
    return new ClusterInventory(
        inventory.cluster(), inventory.controlPlane(), inventory.controlPlaneVersion(), machines, inventory.pools());
  }

  @Override
  public void confirmHostAccess(HostAccessCheck request) {
    if (request == null || request.host() == null) {
      throw invalid("host is required");
    }
    HostAccess host = request.host();
    call("confirmHostAccess", new String[] {"cluster", host.clusterForLogs(), "node", host.nodeName()}, () -> {
      HostAccess confirmed = new HostAuthority(clients.management())
          .confirm(host, request.distribution(), request.profile());
      log.info("host access confirmed: Machine {}/{} at {}", confirmed.secretNamespace(), confirmed.machineName(),
          confirmed.address());
      return confirmed;
    });
  }

  @Override
  public MachineMarkResult markMachineUpgrading(MachineMarkRequest request) {
    requireText("namespace", request.namespace());
    requireText("machineName", request.machineName());
    String machine = request.namespace() + "/" + request.machineName();
    return call(
        "markMachineUpgrading",
        new String[] {"machine", machine},
        () -> {
          CapiObjectStore store = store();
          GenericKubernetesResource observed =
              store.get(
                  CapiResources.MACHINE,
                  request.namespace(),
                  request.machineName(),
                  UpgradeFailures.MACHINE_NOT_FOUND);
          if (observed == null) {
            throw UpgradeFailures.nonRetryable(
                UpgradeFailures.MACHINE_NOT_FOUND, "Machine " + machine + " not found");
          }
          boolean marked = ResourceFields.hasAnnotation(observed, SKIP_REMEDIATION_ANNOTATION);
          String owner = request.owner();
          String value = marked ? ResourceFields.annotation(observed, SKIP_REMEDIATION_ANNOTATION) : null;
          ObjectNode patch = JSON.createObjectNode();
          ObjectNode metadata = patch.putObject("metadata");
          if (request.upgrading()) {
            if (marked) {
              // Ours from an earlier attempt, or an operator's: either way it stays as it is.
              log.info("Machine {} already has {} ({})", machine, SKIP_REMEDIATION_ANNOTATION, shownOwner(value));
              return new MachineMarkResult(false);
            }
            metadata.putObject("annotations").put(SKIP_REMEDIATION_ANNOTATION, owner == null ? "" : owner);
          } else {
            if (!marked) {
              log.info("Machine {} already lacks {}", machine, SKIP_REMEDIATION_ANNOTATION);
              return new MachineMarkResult(false);
            }
            if (owner != null && !owner.equals(value)) {
              log.info("Machine {}: {} was set by someone else ({}); left in place", machine,
                  SKIP_REMEDIATION_ANNOTATION, shownOwner(value));
              return new MachineMarkResult(false);
            }
            if (owner != null) {
              // Removed only as observed: if anyone changed the Machine since, the retry looks again.
              metadata.put("resourceVersion", observed.getMetadata().getResourceVersion());
            }
            metadata.putObject("annotations").putNull(SKIP_REMEDIATION_ANNOTATION);
          }
          store.patch(CapiResources.MACHINE, observed, patch, UpgradeFailures.MACHINE_NOT_FOUND);
          log.info(
              "Machine {}: {} {}",
              machine,
              request.upgrading() ? "added" : "removed",
              SKIP_REMEDIATION_ANNOTATION);
          return new MachineMarkResult(true);
        });
  }

  @Override
  public MachineMarksResult markMachines(MachineMarksRequest request) {
    return ClusterApiActivities.markEach(request, this::markMachineUpgrading);
  }

  private static String shownOwner(String value) {
    return value == null || value.isEmpty() ? "no owner" : value;
  }

  @Override
  public BookkeepingResult recordControlPlaneVersion(ControlPlaneVersionRequest request) {
    requireText("namespace", request.namespace());
    requireText("version", request.version());
    requireText("owner", request.owner());
    if (request.controlPlane() == null) {
      throw invalid("controlPlane is required");
    }
    requireText("controlPlane.name", request.controlPlane().name());
    return call(
        "recordControlPlaneVersion",
        new String[] {"capiObject", request.namespace() + "/" + request.controlPlane().name()},
        () ->
            new BookkeepingResult(
                bookkeeping()
                    .recordControlPlane(
                        request.namespace(),
                        request.controlPlane(),
                        request.version(),
                        request.owner())));
  }

  @Override
  public BookkeepingResult pauseControlPlane(ControlPlaneVersionRequest request) {
    requireText("namespace", request.namespace());
    requireText("owner", request.owner());
    if (request.controlPlane() == null) {
      throw invalid("controlPlane is required");
    }
    requireText("controlPlane.name", request.controlPlane().name());
    return call(
        "pauseControlPlane",
        new String[] {"capiObject", request.namespace() + "/" + request.controlPlane().name()},
        () ->
            new BookkeepingResult(
                bookkeeping().pauseControlPlane(request.namespace(), request.controlPlane(), request.owner())));
  }

  @Override
  public BookkeepingResult releaseControlPlane(ControlPlaneVersionRequest request) {
    requireText("namespace", request.namespace());
    requireText("owner", request.owner());
    if (request.controlPlane() == null) {
      throw invalid("controlPlane is required");
    }
    requireText("controlPlane.name", request.controlPlane().name());
    return call(
        "releaseControlPlane",
        new String[] {"capiObject", request.namespace() + "/" + request.controlPlane().name()},
        () ->
            new BookkeepingResult(
                bookkeeping().releaseControlPlane(request.namespace(), request.controlPlane(), request.owner())));
  }

  @Override
  public BookkeepingResult recordWorkerPoolVersion(PoolVersionRequest request) {
    requireText("namespace", request.namespace());
    requireText("machineDeployment", request.machineDeployment());
    requireText("version", request.version());
    requireText("owner", request.owner());
    return call(
        "recordWorkerPoolVersion",
        new String[] {"capiObject", request.namespace() + "/" + request.machineDeployment()},
        () ->
            new BookkeepingResult(
                bookkeeping()
                    .recordPool(
                        request.namespace(),
                        request.machineDeployment(),
                        request.version(),
                        request.owner())));
  }

  @Override
  public MachineRecordResult recordMachineUpgrade(MachineRecordRequest request) {
    requireText("namespace", request.namespace());
    requireText("machineName", request.machineName());
    requireText("version", request.version());
    if (request.distribution() == null || request.role() == null) {
      throw invalid("distribution and role are required");
    }
    return call(
        "recordMachineUpgrade",
        new String[] {"machine", request.namespace() + "/" + request.machineName()},
        () -> {
          CapiObjectStore store = store();
          MachineBookkeeping.Recorded recorded =
              new MachineBookkeeping(store, new InfraMachineTypes(clients.management()))
                  .record(request.namespace(), request.machineName(), request.version(),
                      request.distribution(), request.role());
          return new MachineRecordResult(recorded.previousVersion(), recorded.patches());
        });
  }

  private CapiObjectStore store() {
    return new CapiObjectStore(clients.management());
  }

  private ClusterInventoryReader reader() {
    return new ClusterInventoryReader(store());
  }

  private VersionBookkeeping bookkeeping() {
    CapiObjectStore store = store();
    return new VersionBookkeeping(store, new ClusterInventoryReader(store));
  }

  /** Runs one activity with {@code mdc} in the logging context, logging a failure once. */
  @SuppressWarnings("try") // the MDC scope is the resource's whole purpose
  private static <T> T call(String activity, String[] mdc, Supplier<T> body) {
    try (KubeMdc scope = KubeMdc.of(mdc)) {
      try {
        return body.get();
      } catch (ApplicationFailure e) {
        log.warn("{} failed: {}: {}", activity, e.getType(), e.getOriginalMessage());
        throw e;
      }
    }
  }

  private static void requireText(String what, String value) {
    if (value == null || value.isBlank()) {
      throw invalid(what + " is required");
    }
  }

  private static ApplicationFailure invalid(String message) {
    return UpgradeFailures.nonRetryable(UpgradeFailures.INVALID_REQUEST, message);
  }

  @Override
  @SuppressWarnings("try") // the MDC scope is the resource's whole purpose
  public MachineVersionResult recordMachineVersion(MachineVersionRequest request) {
    String machine = request.namespace() + "/" + request.machineName();
    try (KubeMdc mdc = KubeMdc.of("machine", machine)) {
      try {
        return recordVersion(request, "Machine " + machine);
      } catch (ApplicationFailure e) {
        log.warn("recordMachineVersion failed: {}: {}", e.getType(), e.getOriginalMessage());
        throw e;
      }
    }
  }

  private MachineVersionResult recordVersion(MachineVersionRequest request, String what) {
    try {
      Resource<GenericKubernetesResource> resource =
          clients
              .management()
              .genericKubernetesResources(CapiResources.MACHINE)
              .inNamespace(request.namespace())
              .withName(request.machineName());
      GenericKubernetesResource observed = resource.get();
      if (observed == null) {
        throw UpgradeFailures.nonRetryable(UpgradeFailures.MACHINE_NOT_FOUND, what + " not found");
      }
      String previous = specVersion(observed);
      if (request.version().equals(previous)) {
        log.info("{} already at version {}", what, previous);
        return new MachineVersionResult(previous, false);
      }
      resource.patch(PatchContext.of(PatchType.JSON_MERGE), versionPatch(observed, request));
      log.info("{} spec.version {} -> {}", what, previous, request.version());
      return new MachineVersionResult(previous, true);
    } catch (KubernetesClientException e) {
      throw KubeFailures.translate(e, UpgradeFailures.MACHINE_NOT_FOUND, what);
    }
  }

  private static String specVersion(GenericKubernetesResource machine) {
    Object spec = machine.getAdditionalProperties().get("spec");
    if (spec instanceof Map<?, ?> map && map.get("version") instanceof String version) {
      return version;
    }
    return null;
  }

  /** Guarded by the observed resourceVersion: a concurrent change makes it a retryable 409. */
  private static String versionPatch(
      GenericKubernetesResource observed, MachineVersionRequest request) {
    ObjectNode patch = JSON.createObjectNode();
    patch.putObject("metadata").put("resourceVersion", observed.getMetadata().getResourceVersion());
    patch.putObject("spec").put("version", request.version());
    try {
      return JSON.writeValueAsString(patch);
    } catch (JsonProcessingException e) {
      throw new IllegalStateException("cannot serialise a Machine patch", e);
    }
  }
}
